package io.queuebridge.store.postgres;

import io.queuebridge.core.PublicApiRule;
import org.junit.jupiter.api.Test;

/** The postgres store implements the store SPI and uses nothing of the engines built on it. */
class ArchitectureTest {
  @Test
  void isAStoreOnly() {
    PublicApiRule.checkIsAStoreOnly("io.queuebridge.store.postgres");
  }
}
