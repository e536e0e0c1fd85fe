package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PayloadTest {
  @Test
  void utf8TextIsText() {
    assertThat(Payload.of(StoreFixture.utf8("grüße\tand\nlines"), false))
        .isEqualTo(new Payload("grüße\tand\nlines", null, null));
    assertThat(Payload.of(new byte[0], false).display()).isEqualTo("(empty)");
  }

  @Test
  void otherBytesAreBase64OrHex() {
    byte[] invalidUtf8 = {(byte) 0xc3, 0x28};
    byte[] controlCharacter = {'a', 0x01};

    assertThat(Payload.of(invalidUtf8, false).display()).isEqualTo("base64:wyg=");
    assertThat(Payload.of(invalidUtf8, true).display()).isEqualTo("hex:c328");
    assertThat(Payload.of(controlCharacter, false).base64()).isEqualTo("YQE=");
    assertThat(Payload.of(null, false)).isNull();
  }
}
