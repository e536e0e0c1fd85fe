package io.queuebridge.connect.source;

import io.queuebridge.connect.common.WorkerApiRule;
import io.queuebridge.core.PublicApiRule;
import org.junit.jupiter.api.Test;

/** The source connector uses queue-core's public API only. */
class ArchitectureTest {
  @Test
  void usesOnlyTheCoresPublicApi() {
    PublicApiRule.checkUsesOnlyThePublicApi("io.queuebridge.connect.source");
  }

  @Test
  void namesNoWorkerApiNewerThanTheOldestSupportedWorker() {
    WorkerApiRule.checkNamesNoApiNewerThanTheOldestWorker("io.queuebridge.connect.source");
  }
}
