package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OffsetTrackerTest {

  @Test
  void committedNextIsOnePastTheContiguousDonePrefix() {
    OffsetTracker t = new OffsetTracker(10);
    for (long o = 10; o < 15; o++) {
      t.emitted(o);
    }
    assertThat(t.done(12)).isFalse();
    assertThat(t.committedNext()).isEqualTo(10);
    assertThat(t.done(10)).isTrue();
    assertThat(t.committedNext()).isEqualTo(11);
    assertThat(t.done(11)).isTrue();
    assertThat(t.committedNext()).as("11 and the earlier 12").isEqualTo(13);
    assertThat(t.outstanding()).isEqualTo(2);
  }

  @Test
  void gapsBetweenRegisteredOffsetsAreCoveredByTheNextOne() {
    OffsetTracker t = new OffsetTracker(0);
    t.emitted(3); // 0..2 truncated away
    t.emitted(9);
    t.done(3);
    assertThat(t.committedNext()).isEqualTo(4);
    t.done(9);
    assertThat(t.committedNext()).isEqualTo(10);
  }

  @Test
  void unknownAndRepeatedOffsetsAreIgnored() {
    OffsetTracker t = new OffsetTracker(0);
    t.emitted(0);
    assertThat(t.done(7)).isFalse();
    assertThat(t.done(0)).isTrue();
    assertThat(t.done(0)).isFalse();
    assertThat(t.committedNext()).isEqualTo(1);
  }

  @Test
  void outOfOrderRegistrationIsRefused() {
    OffsetTracker t = new OffsetTracker(5);
    assertThatThrownBy(() -> t.emitted(4)).isInstanceOf(IllegalArgumentException.class);
    t.emitted(6);
    assertThatThrownBy(() -> t.emitted(6)).hasMessageContaining("out of order");
  }

  @Test
  void growsPastItsInitialCapacityAcrossTheRingBoundary() {
    OffsetTracker t = new OffsetTracker(0);
    // move the ring head forward first, so growth has to unwrap
    for (long o = 0; o < 200; o++) {
      t.emitted(o);
      t.done(o);
    }
    for (long o = 200; o < 5_200; o++) {
      t.emitted(o);
    }
    for (long o = 5_199; o > 200; o--) {
      t.done(o);
    }
    assertThat(t.committedNext()).isEqualTo(200);
    t.done(200);
    assertThat(t.committedNext()).isEqualTo(5_200);
    assertThat(t.outstanding()).isZero();
  }
}
