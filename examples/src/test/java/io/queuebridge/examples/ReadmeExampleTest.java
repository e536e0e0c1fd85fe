package io.queuebridge.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The README's embedding example is the code that compiles in {@code EmbeddedJobQueue} (against the
 * public API only: {@link ArchitectureTest}), character for character once the method's indentation
 * is removed.
 */
class ReadmeExampleTest {
  private static final Path README = Path.of("..", "README.md");
  private static final Path EXAMPLE =
      Path.of("src/main/java/io/queuebridge/examples/embedding/EmbeddedJobQueue.java");

  @Test
  void theReadmesEmbeddingExampleIsTheCompiledOne() throws IOException {
    String readme = Files.readString(README);
    int intro = readme.indexOf("Embedding the core as a job queue");
    assertThat(intro).as("the README's embedding section").isNotNegative();
    int start = readme.indexOf("```java\n", intro) + "```java\n".length();
    String shown = readme.substring(start, readme.indexOf("```\n", start));

    String source = Files.readString(EXAMPLE);
    String region =
        source.substring(
            source.indexOf("// README:begin\n") + "// README:begin\n".length(),
            source.indexOf("// README:end"));
    String compiled = region.stripTrailing().stripIndent() + "\n";

    assertThat(shown).isNotBlank().isEqualTo(compiled);
  }
}
