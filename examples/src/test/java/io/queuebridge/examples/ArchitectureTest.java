package io.queuebridge.examples;

import io.queuebridge.core.PublicApiRule;
import org.junit.jupiter.api.Test;

/** The examples (the quickstart and the worker application) use queue-core's public API only. */
class ArchitectureTest {
  @Test
  void useOnlyTheCoresPublicApi() {
    PublicApiRule.checkUsesOnlyThePublicApi("io.queuebridge.examples");
  }
}
