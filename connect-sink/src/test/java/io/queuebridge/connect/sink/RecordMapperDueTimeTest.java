package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.PublishRequest;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The due time a record asks for in its headers ({@code queue.delay.header}, {@code
 * queue.deliver.at.header}), as {@link RecordMapper} reads it and checks it against the target
 * queues: the accepted forms (bytes and strings of digits, the integers and timestamps header
 * converters produce), what means "at once", and every refusal with its message.
 */
class RecordMapperDueTimeTest {
  private static final String DELAY = "x-delay-ms";
  private static final String AT = "x-deliver-at-ms";
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private final MutableClock clock = MutableClock.at(NOW.toString());
  private final RecordMapper mapper =
      new RecordMapper(true, true, true, new DueTimeHeaders(DELAY, AT, clock));

  /** A classic queue with the default limits: maxDelay 7 days, no TTL. */
  private static final QueueConfig WORK = QueueConfig.durable("work").build();

  private static SinkRecord record(ConnectHeaders headers) {
    return new SinkRecord(
        "t",
        3,
        null,
        null,
        null,
        "v",
        42,
        1234L,
        org.apache.kafka.common.record.TimestampType.CREATE_TIME,
        headers);
  }

  private static ConnectHeaders bytes(String name, String value) {
    ConnectHeaders h = new ConnectHeaders();
    h.addBytes(name, value.getBytes(StandardCharsets.UTF_8));
    return h;
  }

  private PublishRequest map(ConnectHeaders headers, QueueConfig... targets) {
    return mapper.toRequest(record(headers), List.of(targets));
  }

  /** The value {@code SimpleHeaderConverter} (the worker's default) makes of {@code raw}. */
  private static ConnectHeaders parsedBySimpleHeaderConverter(String name, String raw) {
    try (SimpleHeaderConverter converter = new SimpleHeaderConverter()) {
      converter.configure(Map.of());
      ConnectHeaders h = new ConnectHeaders();
      h.add(name, converter.toConnectHeader("t", name, raw.getBytes(StandardCharsets.UTF_8)));
      return h;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void aDelayInMillisecondsAsBytesIsSetOnTheRequestAndTheHeaderIsForwarded() {
    PublishRequest r = map(bytes(DELAY, "3000"), WORK);
    assertThat(r.delay()).isEqualTo(Duration.ofSeconds(3));
    assertThat(r.deliverAt()).isNull();
    assertThat(r.headers()).containsExactly(Header.of(DELAY, "3000"));
  }

  @Test
  void aRecordWithoutTheHeaderOrWithADelayOfZeroIsForDeliveryAtOnce() {
    ConnectHeaders other = bytes("other", "3000");
    assertThat(map(other, WORK).isDelayed()).isFalse();
    assertThat(map(new ConnectHeaders(), WORK).isDelayed()).isFalse();
    PublishRequest zero = map(bytes(DELAY, "0"), WORK);
    assertThat(zero.isDelayed()).isFalse();
    assertThat(zero.headers()).as("still forwarded").containsExactly(Header.of(DELAY, "0"));
  }

  @Test
  void stringsAndConnectIntegersAreAcceptedAndLeadingZerosDoNotMatter() {
    ConnectHeaders h = new ConnectHeaders();
    h.addString(DELAY, "0003000");
    assertThat(map(h, WORK).delay()).isEqualTo(Duration.ofSeconds(3));
    for (Object n :
        List.of((byte) 3, (short) 3, 3, 3L, BigInteger.valueOf(3), new BigDecimal("3.000"))) {
      ConnectHeaders typed = new ConnectHeaders();
      typed.add(DELAY, n, null);
      assertThat(map(typed, WORK).delay()).as("%s", n.getClass()).isEqualTo(Duration.ofMillis(3));
    }
    ConnectHeaders buffer = new ConnectHeaders();
    buffer.add(DELAY, ByteBuffer.wrap("x250".getBytes(StandardCharsets.UTF_8), 1, 3), null);
    assertThat(map(buffer, WORK).delay()).isEqualTo(Duration.ofMillis(250));
  }

  @ParameterizedTest(name = "SimpleHeaderConverter: ''{0}'' -> {1} ms")
  @CsvSource({"3000, 3000", "0, 0", "007, 7", "1e3, 1000", "604800000, 604800000"})
  void whatSimpleHeaderConverterParsesIsAccepted(String raw, long millis) {
    PublishRequest r = map(parsedBySimpleHeaderConverter(DELAY, raw), WORK);
    assertThat(r.delay() == null ? 0 : r.delay().toMillis()).isEqualTo(millis);
  }

  @ParameterizedTest(name = "SimpleHeaderConverter: ''{0}'' refused")
  @CsvSource(
      delimiter = '|',
      value = {
        "1.5 | is a floating-point number",
        "-5 | is negative",
        "abc | is not a decimal integer",
        "true | is not a number (a Boolean)",
        "99999999999999999999 | beyond the maxDelay of queue 'work'"
      })
  void whatSimpleHeaderConverterParsesIntoSomethingElseIsRefused(String raw, String problem) {
    assertThatThrownBy(() -> map(parsedBySimpleHeaderConverter(DELAY, raw), WORK))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("record t-3@42: header 'x-delay-ms' (queue.delay.header) = '" + raw)
        .hasMessageContaining(problem)
        .hasMessageContaining("expected");
  }

  @ParameterizedTest(name = "bytes ''{0}'' refused")
  @ValueSource(strings = {"abc", "+5", " 5", "5 ", "1e3", "1.0", "0x10", "3,000", "\uFF13", "-"})
  void bytesThatAreNotOnlyTheDigitsZeroToNineAreRefused(String value) {
    assertThatThrownBy(() -> map(bytes(DELAY, value), WORK))
        .isInstanceOf(DataException.class)
        .hasMessage(
            "record t-3@42: header 'x-delay-ms' (queue.delay.header) = '"
                + value
                + "' is not a decimal integer; expected the delay in milliseconds as a decimal"
                + " integer (the digits 0-9 only; 0 = none)");
  }

  @Test
  void negativeEmptyNullAndNonNumericValuesAreRefusedSayingWhy() {
    assertThatThrownBy(() -> map(bytes(DELAY, "-3000"), WORK))
        .hasMessageContaining("= '-3000' is negative; expected the delay in milliseconds");
    assertThatThrownBy(() -> map(bytes(DELAY, ""), WORK))
        .hasMessageContaining("= '' is empty; expected the delay in milliseconds");
    ConnectHeaders none = new ConnectHeaders();
    none.add(DELAY, null, Schema.OPTIONAL_BYTES_SCHEMA);
    assertThatThrownBy(() -> map(none, WORK))
        .hasMessage(
            "record t-3@42: header 'x-delay-ms' (queue.delay.header) has no value (null); expected"
                + " the delay in milliseconds as a decimal integer (the digits 0-9 only; 0 = none)");
    ConnectHeaders negative = new ConnectHeaders();
    negative.addLong(DELAY, -1L);
    assertThatThrownBy(() -> map(negative, WORK)).hasMessageContaining("= '-1' is negative");
    ConnectHeaders fraction = new ConnectHeaders();
    fraction.addDecimal(DELAY, new BigDecimal("2.5"));
    assertThatThrownBy(() -> map(fraction, WORK)).hasMessageContaining("= '2.5' has a fraction");
    ConnectHeaders map = new ConnectHeaders();
    map.add(DELAY, Map.of("ms", 5), null);
    assertThatThrownBy(() -> map(map, WORK))
        .hasMessageContaining("= '{ms=5}' is not a number (a ")
        .hasMessageContaining("expected the delay in milliseconds");
    ConnectHeaders date = new ConnectHeaders();
    date.addTimestamp(DELAY, new Date(5));
    assertThatThrownBy(() -> map(date, WORK))
        .as("a timestamp is no delay")
        .hasMessageContaining("is not a number (a Date)");
  }

  @Test
  void aValueWithControlCharactersOrBinaryBytesIsShownSafely() {
    ConnectHeaders h = new ConnectHeaders();
    h.addBytes(DELAY, new byte[] {'1', 0, '\n', (byte) 0xFF});
    assertThatThrownBy(() -> map(h, WORK))
        .hasMessageContaining("= '1\\u0000\\u000A\uFFFD' is not a decimal integer")
        .hasMessageNotContaining("\u0000")
        .hasMessageNotContaining("\n");
    assertThatThrownBy(() -> map(bytes(DELAY, "9".repeat(500)), WORK))
        .hasMessageContaining("...(500 chars)")
        .hasMessageContaining("beyond the maxDelay of queue 'work'");
  }

  @Test
  void aRepeatedHeaderOrBothHeadersOnOneRecordAreRefused() {
    ConnectHeaders twice = bytes(DELAY, "1000");
    twice.addBytes(DELAY, "1000".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> map(twice, WORK))
        .isInstanceOf(DataException.class)
        .hasMessage(
            "record t-3@42 carries the header 'x-delay-ms' (queue.delay.header) 2 times; expected"
                + " it at most once");
    ConnectHeaders both = bytes(DELAY, "1000");
    both.addBytes(AT, "1767225605000".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> map(both, WORK))
        .isInstanceOf(DataException.class)
        .hasMessage(
            "record t-3@42 carries both the delay header 'x-delay-ms' (queue.delay.header) and the"
                + " due-time header 'x-deliver-at-ms' (queue.deliver.at.header); expected at most"
                + " one of them");
  }

  @Test
  void aDelayUpToTheTargetsMaxDelayIsAcceptedAndOneMillisecondMoreIsRefusedNamingTheQueue() {
    QueueConfig minute = QueueConfig.durable("minute").maxDelay(Duration.ofMinutes(1)).build();
    assertThat(map(bytes(DELAY, "60000"), minute).delay()).isEqualTo(Duration.ofMinutes(1));
    assertThatThrownBy(() -> map(bytes(DELAY, "60001"), minute))
        .isInstanceOf(DataException.class)
        .hasMessage(
            "record t-3@42: header 'x-delay-ms' (queue.delay.header) = '60001': a delay beyond"
                + " the maxDelay of queue 'minute'; expected at most PT1M (60000 ms)");
    assertThat(map(bytes(DELAY, "604800000"), WORK).delay()).isEqualTo(Duration.ofDays(7));
    assertThatThrownBy(() -> map(bytes(DELAY, "604800001"), WORK))
        .hasMessageContaining("expected at most PT168H (604800000 ms)");
  }

  @Test
  void aQueueThatTakesNoDelaysRefusesEveryDelayButZero() {
    QueueConfig none = QueueConfig.durable("plain").maxDelay(Duration.ZERO).build();
    assertThat(map(bytes(DELAY, "0"), none).isDelayed()).isFalse();
    assertThatThrownBy(() -> map(bytes(DELAY, "1"), none))
        .hasMessageContaining(
            "a delay, but queue 'plain' takes no delayed messages (maxDelay PT0S); expected at"
                + " most PT0S (0 ms)");
  }

  @Test
  void aDelayBeyondTheTargetsMessageTtlIsRefusedTheMessageWouldExpireFirst() {
    QueueConfig ttl = QueueConfig.durable("short").messageTtl(Duration.ofSeconds(10)).build();
    assertThat(map(bytes(DELAY, "10000"), ttl).delay()).isEqualTo(Duration.ofSeconds(10));
    assertThatThrownBy(() -> map(bytes(DELAY, "10001"), ttl))
        .hasMessage(
            "record t-3@42: header 'x-delay-ms' (queue.delay.header) = '10001': a delay beyond"
                + " the messageTtl of queue 'short' (the message would expire before it is due);"
                + " expected at most PT10S (10000 ms)");
  }

  @Test
  void everyTargetMustAcceptTheDelay() {
    QueueConfig minute = QueueConfig.durable("minute").maxDelay(Duration.ofMinutes(1)).build();
    assertThat(map(bytes(DELAY, "60000"), WORK, minute).delay()).isEqualTo(Duration.ofMinutes(1));
    assertThatThrownBy(() -> map(bytes(DELAY, "120000"), WORK, minute))
        .hasMessageContaining("beyond the maxDelay of queue 'minute'");
  }

  @Test
  void aDueTimeInEpochMillisecondsIsSetAsItIsAndOneNotAfterNowMeansAtOnce() {
    long now = NOW.toEpochMilli();
    PublishRequest later = map(bytes(AT, Long.toString(now + 5_000)), WORK);
    assertThat(later.deliverAt()).isEqualTo(NOW.plusSeconds(5));
    assertThat(later.delay()).isNull();
    assertThat(later.headers()).containsExactly(Header.of(AT, Long.toString(now + 5_000)));
    assertThat(map(bytes(AT, Long.toString(now)), WORK).isDelayed()).as("now").isFalse();
    assertThat(map(bytes(AT, "0"), WORK).isDelayed()).as("1970").isFalse();
    clock.advance(Duration.ofSeconds(6));
    assertThat(map(bytes(AT, Long.toString(now + 5_000)), WORK).isDelayed())
        .as("passed by the time it is mapped")
        .isFalse();
  }

  @Test
  void aDueTimeIsCheckedAgainstTheTargetsLimitsFromNow() {
    long now = NOW.toEpochMilli();
    long week = Duration.ofDays(7).toMillis();
    assertThat(map(bytes(AT, Long.toString(now + week)), WORK).deliverAt())
        .isEqualTo(NOW.plus(Duration.ofDays(7)));
    assertThatThrownBy(() -> map(bytes(AT, Long.toString(now + week + 1)), WORK))
        .isInstanceOf(DataException.class)
        .hasMessage(
            "record t-3@42: header 'x-deliver-at-ms' (queue.deliver.at.header) = '"
                + (now + week + 1)
                + "': a due time PT168H0.001S after now (2026-01-01T00:00:00Z) beyond the maxDelay"
                + " of queue 'work'; expected at most PT168H (604800000 ms)");
    assertThatThrownBy(() -> map(bytes(AT, "soon"), WORK))
        .hasMessageContaining(
            "= 'soon' is not a decimal integer; expected the due time in milliseconds since"
                + " 1970-01-01T00:00:00Z as a decimal integer (the digits 0-9 only), or a Connect"
                + " Timestamp");
    assertThatThrownBy(() -> map(bytes(AT, "99999999999999999999"), WORK))
        .hasMessageContaining("beyond the maxDelay of queue 'work'");
  }

  @Test
  void aDueTimeMayBeAConnectTimestampAsSimpleHeaderConverterParsesAnIsoTime() {
    PublishRequest r = map(parsedBySimpleHeaderConverter(AT, "2026-01-01T00:00:05.000Z"), WORK);
    assertThat(r.deliverAt()).isEqualTo(NOW.plusSeconds(5));
    ConnectHeaders typed = new ConnectHeaders();
    typed.add(AT, Date.from(NOW.plusMillis(1)), Timestamp.SCHEMA);
    assertThat(map(typed, WORK).deliverAt()).isEqualTo(NOW.plusMillis(1));
    ConnectHeaders epochMillis = parsedBySimpleHeaderConverter(AT, "1767225602000");
    assertThat(map(epochMillis, WORK).deliverAt()).isEqualTo(NOW.plusSeconds(2));
  }

  @Test
  void theHeadersAreReadWhenHeadersAreNotForwardedAndIgnoredWhenNoKeyNamesThem() {
    RecordMapper dropsHeaders =
        new RecordMapper(true, false, true, new DueTimeHeaders(DELAY, AT, clock));
    PublishRequest r = dropsHeaders.toRequest(record(bytes(DELAY, "3000")), List.of(WORK));
    assertThat(r.delay()).isEqualTo(Duration.ofSeconds(3));
    assertThat(r.headers()).isEmpty();

    RecordMapper off = new RecordMapper(true, true, true);
    PublishRequest plain = off.toRequest(record(bytes(DELAY, "abc")), List.of(WORK));
    assertThat(plain.isDelayed()).isFalse();
    assertThat(plain.headers()).containsExactly(Header.of(DELAY, "abc"));

    RecordMapper onlyDueTimes =
        new RecordMapper(true, true, true, new DueTimeHeaders("", AT, clock));
    assertThat(onlyDueTimes.toRequest(record(bytes(DELAY, "abc")), List.of(WORK)).isDelayed())
        .as("queue.delay.header unset: the header is an ordinary one")
        .isFalse();
  }
}
