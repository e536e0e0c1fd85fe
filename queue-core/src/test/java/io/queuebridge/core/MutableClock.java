package io.queuebridge.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock tests move by hand. Thread-safe. */
public final class MutableClock extends Clock {
  private volatile Instant now;

  public MutableClock(Instant start) {
    this.now = start;
  }

  public static MutableClock at(String instant) {
    return new MutableClock(Instant.parse(instant));
  }

  public void advance(Duration d) {
    now = now.plus(d);
  }

  public void set(Instant instant) {
    now = instant;
  }

  @Override
  public Instant instant() {
    return now;
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
