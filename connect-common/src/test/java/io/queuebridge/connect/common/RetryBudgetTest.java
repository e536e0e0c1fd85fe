package io.queuebridge.connect.common;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.errors.PelFullException;
import io.queuebridge.core.errors.QueueStoreException;
import java.time.Duration;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {
  private final MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
  private final QueueStoreException down =
      new QueueStoreException("q", "postgres store db: Connection refused [SQLSTATE 08001]");

  @Test
  void aRunOfFailuresFailsOnceItLastedTheTimeoutNamingTheStoreTheKeyAndTheLastError() {
    RetryBudget budget = new RetryBudget("queue.retry.timeout.ms", Duration.ofSeconds(5), clock);
    assertThat(budget.failed("postgres:db", down)).isNull();
    clock.advance(Duration.ofMillis(4_999));
    assertThat(budget.failed("postgres:db", down)).isNull();
    clock.advance(Duration.ofMillis(1));
    ConnectException spent = budget.failed("postgres:db", down);
    assertThat(spent)
        .hasMessage(
            "giving up on the store postgres:db: 3 transient failure(s) in a row over 5000 ms,"
                + " past queue.retry.timeout.ms=5000; restart the task once the store is reachable"
                + " again (it resumes where the store says, exactly once). Last error: postgres"
                + " store db: Connection refused [SQLSTATE 08001]")
        .hasCause(down);
    assertThat(budget.failures()).isEqualTo(3);
  }

  @Test
  void aSuccessEndsTheRun() {
    RetryBudget budget = new RetryBudget("k", Duration.ofSeconds(5), clock);
    budget.failed("s", down);
    clock.advance(Duration.ofSeconds(4));
    budget.succeeded();
    assertThat(budget.failures()).isZero();
    clock.advance(Duration.ofSeconds(4));
    assertThat(budget.failed("s", down)).as("a new run starts").isNull();
    clock.advance(Duration.ofSeconds(4));
    assertThat(budget.failed("s", down)).isNull();
    clock.advance(Duration.ofSeconds(1));
    assertThat(budget.failed("s", down)).isNotNull();
  }

  @Test
  void noTimeoutRetriesForeverAndZeroFailsAtTheFirstFailure() {
    RetryBudget forever = new RetryBudget("k", null, clock);
    for (int i = 0; i < 100; i++) {
      assertThat(forever.failed("s", down)).isNull();
      clock.advance(Duration.ofDays(1));
    }
    assertThat(new RetryBudget("k", Duration.ZERO, clock).failed("s", down)).isNotNull();
  }

  @Test
  void storeFailuresAreToldByTypeAlsoWhenWrapped() {
    assertThat(RetryBudget.isStoreFailure(down)).isTrue();
    assertThat(RetryBudget.isStoreFailure(new RetriableException("background", down))).isTrue();
    assertThat(RetryBudget.isStoreFailure(new PelFullException("q", "g", 10, 10))).isFalse();
    assertThat(RetryBudget.isStoreFailure(new RetriableException("interrupted"))).isFalse();
  }
}
