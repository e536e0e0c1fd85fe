package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.WorkerApiRule;
import io.queuebridge.core.PublicApiRule;
import org.junit.jupiter.api.Test;

/** The sink connector uses queue-core's public API only. */
class ArchitectureTest {
  @Test
  void usesOnlyTheCoresPublicApi() {
    PublicApiRule.checkUsesOnlyThePublicApi("io.queuebridge.connect.sink");
  }

  @Test
  void namesNoWorkerApiNewerThanTheOldestSupportedWorker() {
    WorkerApiRule.checkNamesNoApiNewerThanTheOldestWorker("io.queuebridge.connect.sink");
  }
}
