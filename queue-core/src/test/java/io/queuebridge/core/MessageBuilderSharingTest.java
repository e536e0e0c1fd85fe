package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A builder from {@link Message#toBuilder()} shares the message's immutable headers and properties
 * until it changes them, and a {@link PublishRequest.Builder} hands its collections over without a
 * copy: neither may ever let a later change reach a message already built.
 */
class MessageBuilderSharingTest {
  private static Message original() {
    return Message.builder()
        .topic("t")
        .header("h", new byte[] {1})
        .property("p", "1")
        .value(new byte[] {9})
        .build();
  }

  /** Properties as "key=value" in order, and header keys in order. */
  private static void assertHolds(
      Map<String, String> properties,
      List<Header> headers,
      List<String> expectedProperties,
      String... expectedHeaderKeys) {
    assertThat(properties.entrySet())
        .extracting(e -> e.getKey() + "=" + e.getValue())
        .containsExactlyElementsOf(expectedProperties);
    assertThat(headers).extracting(Header::key).containsExactly(expectedHeaderKeys);
  }

  @Test
  void changingARestampedBuilderNeverChangesTheOriginalMessage() {
    Message m = original();
    Message changed =
        m.toBuilder().property("q", "2").header("h2", new byte[] {2}).offset(5).build();
    assertHolds(m.properties(), m.headers(), List.of("p=1"), "h");
    assertHolds(changed.properties(), changed.headers(), List.of("p=1", "q=2"), "h", "h2");
  }

  @Test
  void replacingPropertiesOfARestampedBuilderNeverChangesTheOriginalMessage() {
    Message m = original();
    Message changed = m.toBuilder().properties(Map.of("z", "0")).build();
    assertThat(m.properties()).containsExactly(Map.entry("p", "1"));
    assertThat(changed.properties()).containsExactly(Map.entry("z", "0"));
  }

  @Test
  void aRestampedMessageKeepsEveryHeaderAndProperty() {
    Message m = original();
    Message restamped = m.toBuilder().id("7").offset(3).build();
    assertThat(restamped.properties()).isEqualTo(m.properties());
    assertThat(restamped.headers()).isEqualTo(m.headers());
  }

  @Test
  void reusingAPublishRequestBuilderNeverChangesARequestAlreadyBuilt() {
    PublishRequest.Builder b = PublishRequest.builder("t").property("a", "1").header("h", null);
    PublishRequest first = b.build();
    b.property("b", "2").header("h2", new byte[] {3});
    PublishRequest second = b.build();
    assertHolds(first.properties(), first.headers(), List.of("a=1"), "h");
    assertHolds(second.properties(), second.headers(), List.of("a=1", "b=2"), "h", "h2");
  }

  @Test
  void aMessageWithoutHeadersOrPropertiesHasEmptyOnes() {
    Message m = Message.builder().topic("t").build();
    assertThat(m.headers()).isEmpty();
    assertThat(m.properties()).isEmpty();
  }

  @Test
  void oneOrMorePropertiesStayUnmodifiableInOrderAndNullValuesAreKept() {
    Message one = Message.builder().property("only", "v").build();
    assertThat(one.properties()).containsExactly(Map.entry("only", "v"));
    assertThat(one.properties().get(null)).as("a lookup of null answers none").isNull();
    assertThatThrownBy(() -> one.properties().put("x", "y"))
        .isInstanceOf(UnsupportedOperationException.class);
    Message two = one.toBuilder().property("next", "w").build();
    assertHolds(two.properties(), two.headers(), List.of("only=v", "next=w"));
    assertHolds(one.properties(), one.headers(), List.of("only=v"));
    Message nullValue = Message.builder().property("n", null).build();
    assertThat(nullValue.properties()).containsEntry("n", null).hasSize(1);
    assertThatThrownBy(() -> nullValue.properties().remove("n"))
        .isInstanceOf(UnsupportedOperationException.class);
    Message replaced = two.toBuilder().properties(Map.of("r", "1")).build();
    assertHolds(replaced.properties(), replaced.headers(), List.of("r=1"));
    assertHolds(two.properties(), two.headers(), List.of("only=v", "next=w"));
  }

  @Test
  void buildCopiesKeyAndValueAndBuildOwnedTakesTheArraysOver() {
    byte[] key = {1};
    byte[] value = {2};
    PublishRequest copied = PublishRequest.builder("t").key(key).value(value).build();
    PublishRequest owned = PublishRequest.builder("t").key(key).value(value).buildOwned();
    key[0] = 7;
    value[0] = 8;
    assertThat(copied.asMessage().key()).containsExactly(1);
    assertThat(copied.asMessage().value()).containsExactly(2);
    assertThat(owned.asMessage().keyUnsafe()).as("the caller's array").isSameAs(key);
    assertThat(owned.asMessage().valueUnsafe()).as("the caller's array").isSameAs(value);
  }

  @Test
  void aRequestKnowsWhetherAPropertyNameIsReservedWhateverWayItWasSet() {
    String reserved = MessageProperties.OFFSET;
    assertThat(PublishRequest.builder("t").property("a", "1").build().hasReservedProperty())
        .isFalse();
    assertThat(
            PublishRequest.builder("t")
                .property("a", "1")
                .property(reserved, "1")
                .buildOwned()
                .hasReservedProperty())
        .isTrue();
    assertThat(
            PublishRequest.builder("t")
                .properties(Map.of("a", "1", reserved, "2"))
                .build()
                .hasReservedProperty())
        .isTrue();
    assertThat(
            PublishRequest.builder("t")
                .property(reserved, "1")
                .properties(Map.of("a", "1"))
                .build()
                .hasReservedProperty())
        .as("replaced by properties without one")
        .isFalse();
    assertThat(
            PublishRequest.builder("t")
                .properties(Map.of("a", "1"))
                .property(reserved, "2")
                .build()
                .hasReservedProperty())
        .isTrue();
  }
}
