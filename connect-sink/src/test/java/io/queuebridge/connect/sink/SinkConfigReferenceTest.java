package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.ConfigReference;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The sink's configuration reference in docs/CONFIGURATION.md is generated from {@link
 * QueueSinkConfig#CONFIG_DEF}; this fails when the committed text drifts. To regenerate: {@code mvn
 * -pl connect-sink -am test -Dtest=SinkConfigReferenceTest -Dqueuebridge.docs.update=true
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class SinkConfigReferenceTest {
  private static final Path REFERENCE = Path.of("..", "docs", "CONFIGURATION.md");
  private static final String SECTION = "sink-config";

  @Test
  void theReferenceMatchesTheConfigDef() throws Exception {
    ConfigReference.assertUpToDate(
        REFERENCE,
        SECTION,
        QueueSinkConfig.CONFIG_DEF,
        "docs/CONFIGURATION.md's sink configuration reference");
  }
}
