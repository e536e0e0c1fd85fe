package io.queuebridge.connect.source;

import io.queuebridge.connect.common.ConfigReference;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The source's configuration reference in README.md is generated from {@link
 * QueueSourceConfig#CONFIG_DEF}; this fails when the committed text drifts. To regenerate: {@code
 * mvn -pl connect-source -am test -Dtest=SourceReadmeConfigReferenceTest
 * -Dqueuebridge.docs.update=true -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class SourceReadmeConfigReferenceTest {
  private static final Path README = Path.of("..", "README.md");
  private static final String SECTION = "source-config";

  @Test
  void readmeConfigReferenceMatchesTheConfigDef() throws Exception {
    ConfigReference.assertUpToDate(
        README,
        SECTION,
        QueueSourceConfig.CONFIG_DEF,
        "README.md's source configuration reference");
  }
}
