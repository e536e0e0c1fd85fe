package io.queuebridge.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.examples.PublishedDocs.Finding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's documentation reads without the project's history: no development-process words,
 * no paths of a build machine, no link that leads nowhere. The archives ship these files
 * (PluginArchiveIT and CliArchiveIT compare them byte for byte).
 */
class PublishedDocsTest {
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();

  @TempDir Path temp;

  @Test
  void theRepositorysDocsHoldNoProcessVocabularyAndNoMachinePath() {
    List<Path> docs = PublishedDocs.markdownFiles(REPO);
    assertThat(docs)
        .as("the published docs")
        .contains(
            REPO.resolve("README.md"),
            REPO.resolve("CHANGELOG.md"),
            REPO.resolve("docs/PERFORMANCE.md"),
            REPO.resolve("docs/perf/ordering.md"),
            REPO.resolve("examples/README.md"));
    assertThat(PublishedDocs.vocabularyUnder(REPO))
        .as("development-process words or build-machine paths in the published docs")
        .isEmpty();
  }

  @Test
  void theReadmeStaysAShortUserPath() throws IOException {
    assertThat(Files.readAllLines(REPO.resolve("README.md")))
        .as("README.md: the user path in at most 250 lines, the rest in docs/")
        .hasSizeLessThanOrEqualTo(250);
  }

  @Test
  void everyRelativeLinkLeadsToAFileAndAHeading() {
    assertThat(PublishedDocs.brokenLinksUnder(REPO))
        .as("relative links of the published docs that lead nowhere")
        .isEmpty();
  }

  @Test
  void aPlantedSessionNumberIssueNumberOrMachinePathIsFound() throws IOException {
    Path page = temp.resolve("planted.md");
    Files.writeString(
        page,
        String.join(
            "\n",
            "# A page",
            // assembled, so that the repository itself holds none of these words
            String.format("Measured in %s %d against the reference.", "session", 3),
            String.format("Fixed for %s #%d, see there.", "issue", 17),
            String.format("Written to /%s/bench-tmp/sinkperf by the harness.", "work"),
            String.format("Run under %s first.", "f" + "lock"),
            "Plain text: a session timeout, issues in general, /var/lib/queue-bridge."));
    assertThat(PublishedDocs.vocabulary(page))
        .extracting(Finding::line, Finding::rule)
        .containsExactly(
            Tuple.tuple(2, "a development session"),
            Tuple.tuple(3, "an issue number"),
            Tuple.tuple(4, "an absolute path of a build machine"),
            Tuple.tuple(5, "a build lock"));
  }

  @Test
  void aLinkToAMissingFileOrHeadingIsFound() throws IOException {
    Files.writeString(temp.resolve("other.md"), "# Other page\n\n## The `queue.name` key\n");
    Path page = temp.resolve("page.md");
    Files.writeString(
        page,
        String.join(
            "\n",
            "# Page",
            "[fine](other.md) [fine](other.md#the-queuename-key) [fine](#page)",
            "[gone](missing.md) [gone](other.md#no-such-heading)",
            "```",
            "[in code](not-checked.md)",
            "```",
            "[web](https://example.com/x.md)"));
    assertThat(PublishedDocs.brokenLinks(page))
        .extracting(Finding::line, Finding::text)
        .containsExactly(Tuple.tuple(3, "missing.md"), Tuple.tuple(3, "other.md#no-such-heading"));
  }
}
