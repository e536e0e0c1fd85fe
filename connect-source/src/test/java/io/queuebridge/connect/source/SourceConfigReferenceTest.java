package io.queuebridge.connect.source;

import io.queuebridge.connect.common.ConfigReference;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The source's configuration reference in docs/CONFIGURATION.md is generated from {@link
 * QueueSourceConfig#CONFIG_DEF}; this fails when the committed text drifts. To regenerate: {@code
 * mvn -pl connect-source -am test -Dtest=SourceConfigReferenceTest -Dqueuebridge.docs.update=true
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class SourceConfigReferenceTest {
  private static final Path REFERENCE = Path.of("..", "docs", "CONFIGURATION.md");
  private static final String SECTION = "source-config";

  @Test
  void theReferenceMatchesTheConfigDef() throws Exception {
    ConfigReference.assertUpToDate(
        REFERENCE,
        SECTION,
        QueueSourceConfig.CONFIG_DEF,
        "docs/CONFIGURATION.md's source configuration reference");
  }
}
