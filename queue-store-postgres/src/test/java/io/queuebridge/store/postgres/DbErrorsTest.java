package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.queuebridge.core.errors.FatalQueueException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.RetriableQueueException;
import io.queuebridge.core.errors.StoreRefusedException;
import java.io.EOFException;
import java.net.SocketException;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which SQL errors the postgres store reports as retriable ({@link QueueStoreException}) and which
 * as fatal ({@link StoreRefusedException}), by SQLSTATE and by exception type, without a server.
 */
class DbErrorsTest {
  private static final String STORE = "postgres:jdbc:postgresql://db:5432/app#qb as app";

  static Stream<Arguments> states() {
    return Stream.of(
        // retriable: a retry of the same call may pass
        arguments("08000", "connection_exception", true),
        arguments("08001", "sqlclient_unable_to_establish_sqlconnection", true),
        arguments("08003", "connection_does_not_exist", true),
        arguments("08006", "connection_failure", true),
        arguments("08P01", "protocol_violation", true),
        arguments("40001", "serialization_failure", true),
        arguments("40P01", "deadlock_detected", true),
        arguments("53000", "insufficient_resources", true),
        arguments("53100", "disk_full", true),
        arguments("53200", "out_of_memory", true),
        arguments("53300", "too_many_connections", true),
        arguments("55P03", "lock_not_available", true),
        arguments("57014", "query_canceled (statement_timeout)", true),
        arguments("57P01", "admin_shutdown", true),
        arguments("57P02", "crash_shutdown", true),
        arguments("57P03", "cannot_connect_now", true),
        arguments("57P05", "idle_session_timeout", true),
        arguments("58030", "io_error", true),
        // fatal: it will fail the same way until someone fixes the cause
        arguments("42501", "insufficient_privilege", false),
        arguments("42P01", "undefined_table", false),
        arguments("42703", "undefined_column", false),
        arguments("42601", "syntax_error", false),
        arguments("42883", "undefined_function", false),
        arguments("3F000", "invalid_schema_name", false),
        arguments("22001", "string_data_right_truncation", false),
        arguments("22P02", "invalid_text_representation", false),
        arguments("22021", "character_not_in_repertoire", false),
        arguments("23505", "unique_violation", false),
        arguments("23503", "foreign_key_violation", false),
        arguments("23502", "not_null_violation", false),
        arguments("25006", "read_only_sql_transaction", false),
        arguments("25P02", "in_failed_sql_transaction", false),
        arguments("40002", "transaction_integrity_constraint_violation", false),
        arguments("55000", "object_not_in_prerequisite_state", false),
        arguments("57P04", "database_dropped", false),
        arguments("0A000", "feature_not_supported", false),
        arguments("XX000", "internal_error", false),
        arguments("XX001", "data_corrupted", false),
        arguments("", "no SQLSTATE", false));
  }

  @ParameterizedTest(name = "{0} {1}: retriable {2}")
  @MethodSource("states")
  void theSqlStateDecides(String state, String name, boolean retriable) {
    SQLException e = new SQLException("ERROR: " + name, state.isEmpty() ? null : state);
    assertThat(Db.isRetriable(e)).isEqualTo(retriable);
    QueueException translated = Db.translate(STORE, "orders", e);
    assertThat(translated.isRetriable()).isEqualTo(retriable);
    assertThat(translated)
        .isInstanceOf(retriable ? QueueStoreException.class : StoreRefusedException.class)
        .hasCause(e)
        .hasMessageStartingWith("postgres store " + STORE + ", queue orders: ERROR: " + name);
    assertThat(translated.queue()).isEqualTo("orders");
    if (!state.isEmpty()) {
      assertThat(translated).hasMessageEndingWith("[SQLSTATE " + state + "]");
    }
  }

  @Test
  void theBranchesAreTheCoresTwoKinds() {
    assertThat(Db.translate(STORE, null, new SQLException("x", "42501")))
        .isInstanceOf(FatalQueueException.class)
        .isNotInstanceOf(RetriableQueueException.class)
        .hasMessage("postgres store " + STORE + ": x [SQLSTATE 42501]");
    assertThat(Db.translate(STORE, null, new SQLException("x", "40P01")))
        .isInstanceOf(RetriableQueueException.class);
  }

  @Test
  void transientAndRecoverableTypesAndIoCausesAreRetriableWhateverTheState() {
    assertThat(Db.isRetriable(new SQLTransientConnectionException("pool timed out")))
        .as("a pool timeout")
        .isTrue();
    assertThat(Db.isRetriable(new SQLRecoverableException("reconnect and retry"))).isTrue();
    assertThat(
            Db.isRetriable(
                new SQLException("An I/O error occurred", null, new SocketException("reset"))))
        .as("an I/O error under an exception without a state")
        .isTrue();
    SQLException deep =
        new SQLException(
            "wrapped", null, new RuntimeException(new EOFException("unexpected end of stream")));
    assertThat(Db.isRetriable(deep)).as("deeper in the causes").isTrue();
    assertThat(Db.isRetriable(new SQLException("no state, no cause"))).isFalse();
  }

  @Test
  void aBatchsServerErrorIsFoundInItsNextException() {
    BatchUpdateException batch =
        new BatchUpdateException("Batch entry 0 was aborted", (String) null, (int[]) null);
    batch.setNextException(
        new SQLException("ERROR: permission denied for table messages", "42501"));
    assertThat(Db.sqlState(batch)).isEqualTo("42501");
    assertThat(Db.translate(STORE, "q", batch))
        .isInstanceOf(StoreRefusedException.class)
        .hasMessageContaining("[SQLSTATE 42501]");

    BatchUpdateException deadlock =
        new BatchUpdateException("Batch entry 3", (String) null, (int[]) null);
    deadlock.setNextException(new SQLException("ERROR: deadlock detected", "40P01"));
    assertThat(Db.isRetriable(deadlock)).isTrue();
  }

  @Test
  void aCausalLoopEnds() {
    SQLException a = new SQLException("a", (String) null);
    SQLException b = new SQLException("b", (String) null);
    a.setNextException(b);
    b.setNextException(a);
    assertThat(Db.sqlState(a)).isEmpty();
    assertThat(Db.isRetriable(a)).isFalse();
  }
}
