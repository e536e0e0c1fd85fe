package io.queuebridge.cli;

import io.queuebridge.core.PublicApiRule;
import org.junit.jupiter.api.Test;

/** The command line uses queue-core's public API only. */
class ArchitectureTest {
  @Test
  void usesOnlyTheCoresPublicApi() {
    PublicApiRule.checkUsesOnlyThePublicApi("io.queuebridge.cli");
  }
}
