package io.queuebridge.connect.common;

import io.queuebridge.core.PublicApiRule;
import org.junit.jupiter.api.Test;

/** What both connectors share uses queue-core's public API only. */
class ArchitectureTest {
  @Test
  void usesOnlyTheCoresPublicApi() {
    PublicApiRule.checkUsesOnlyThePublicApi("io.queuebridge.connect.common");
  }

  @Test
  void namesNoWorkerApiNewerThanTheOldestSupportedWorker() {
    WorkerApiRule.checkNamesNoApiNewerThanTheOldestWorker("io.queuebridge.connect.common");
  }
}
