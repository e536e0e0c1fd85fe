package io.queuebridge.core.internal.group;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The sampled latency totals behind {@code GroupMetrics}' claim and ack latencies. */
class LatencySampleTest {
  private final MetricsRecorder.Latency latency = new MetricsRecorder.Latency();

  /** Runs {@code n} operations, each taking {@code nanos} when the sample times it. */
  private int run(int n, long nanos) {
    int timed = 0;
    for (int i = 0; i < n; i++) {
      if (latency.sample()) {
        latency.add(nanos);
        timed++;
      }
    }
    return timed;
  }

  @Test
  void theFirstOperationIsTimedAndThenOneInEight() {
    assertThat(latency.sum()).isZero();
    assertThat(run(1, 500)).isEqualTo(1);
    assertThat(latency.sum()).as("one operation, timed: exact").isEqualTo(500);
    assertThat(run(15, 500)).as("operations 9 of the 16").isEqualTo(1);
    assertThat(latency.sum()).isEqualTo(16 * 500);
  }

  @Test
  void theTotalIsTheSampledMeanTimesTheOperationsCounted() {
    run(7, 100); // the 1st timed, at 100
    assertThat(run(1, 1_000_000)).as("the 8th is not timed").isZero();
    assertThat(latency.sum()).as("counted at the sampled mean").isEqualTo(8 * 100);
    run(2, 300); // the 9th timed, at 300
    assertThat(latency.sum()).isEqualTo(10 * 200);
  }

  @Test
  void resetForgetsTheSampleAndTimesTheNextOperation() {
    run(20, 100);
    latency.reset();
    assertThat(latency.sum()).isZero();
    assertThat(run(1, 700)).isEqualTo(1);
    assertThat(latency.sum()).isEqualTo(700);
  }
}
