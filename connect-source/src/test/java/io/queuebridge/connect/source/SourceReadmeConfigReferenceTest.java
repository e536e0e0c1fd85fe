package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;

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
    String generated = ConfigReference.markdown(QueueSourceConfig.CONFIG_DEF).strip() + "\n";
    if (Boolean.getBoolean("queuebridge.docs.update")) {
      ConfigReference.writeSection(README, SECTION, generated);
    }
    assertThat(ConfigReference.section(README, SECTION))
        .as(
            "README.md's source configuration reference is out of date; regenerate it with"
                + " -Dqueuebridge.docs.update=true (see this test's javadoc)")
        .isEqualTo(generated);
  }
}
