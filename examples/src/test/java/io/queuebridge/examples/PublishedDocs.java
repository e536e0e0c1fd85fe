package io.queuebridge.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads the documentation as a user gets it (the repository's Markdown, the archives' {@code doc/})
 * and reports what a reader without the project's history could not follow: words of the
 * development process (numbered work sessions and issue numbers), absolute paths of a build
 * machine, and relative links that lead nowhere.
 */
public final class PublishedDocs {
  /** A finding: the file, the 1-based line, what is wrong and the text that is. */
  public record Finding(Path file, int line, String rule, String text) {
    @Override
    public String toString() {
      return file + ":" + line + ": " + rule + ": " + text;
    }
  }

  private static final Map<String, Pattern> VOCABULARY = new LinkedHashMap<>();

  static {
    VOCABULARY.put(
        "a development session", Pattern.compile("(?i)\\bsessions? [0-9]|\\bthis session\\b"));
    VOCABULARY.put("an issue number", Pattern.compile("(?i)\\bissues? #?[0-9]"));
    VOCABULARY.put(
        "an absolute path of a build machine",
        Pattern.compile("(?<![\\w.:/-])/(?:work|root|home|Users|tmp)/[\\w.-]"));
    VOCABULARY.put("a build lock", Pattern.compile("\\bflock\\b|\\b(?:bench|build)\\.lock\\b"));
  }

  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");
  private static final Pattern FENCE = Pattern.compile("^\\s*```");

  private PublishedDocs() {}

  /** Every Markdown file under {@code root}, {@code target/} folders and hidden ones left out. */
  public static List<Path> markdownFiles(Path root) {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(Files::isRegularFile)
          .filter(p -> p.getFileName().toString().endsWith(".md"))
          .filter(
              p ->
                  Stream.of(root.relativize(p).toString().split("[/\\\\]"))
                      .noneMatch(s -> s.equals("target") || s.startsWith(".")))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@link #vocabulary} of every file of {@link #markdownFiles}{@code (root)}. */
  public static List<Finding> vocabularyUnder(Path root) {
    return markdownFiles(root).stream().flatMap(f -> vocabulary(f).stream()).toList();
  }

  /** {@link #brokenLinks} of every file of {@link #markdownFiles}{@code (root)}. */
  public static List<Finding> brokenLinksUnder(Path root) {
    return markdownFiles(root).stream().flatMap(f -> brokenLinks(f).stream()).toList();
  }

  /** The process vocabulary and machine paths in {@code file}, code blocks included. */
  public static List<Finding> vocabulary(Path file) {
    List<Finding> found = new ArrayList<>();
    List<String> lines = lines(file);
    for (int i = 0; i < lines.size(); i++) {
      for (Map.Entry<String, Pattern> rule : VOCABULARY.entrySet()) {
        Matcher m = rule.getValue().matcher(lines.get(i));
        while (m.find()) {
          found.add(new Finding(file, i + 1, rule.getKey(), excerpt(lines.get(i), m.start())));
        }
      }
    }
    return found;
  }

  /**
   * Relative links of {@code file} (outside code blocks) whose target file does not exist, or whose
   * {@code #anchor} names no heading of a Markdown target (GitHub's heading slugs).
   */
  public static List<Finding> brokenLinks(Path file) {
    List<Finding> found = new ArrayList<>();
    List<String> lines = lines(file);
    Map<Path, Set<String>> anchors = new HashMap<>();
    boolean code = false;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (FENCE.matcher(line).find()) {
        code = !code;
        continue;
      }
      if (code) {
        continue;
      }
      Matcher m = LINK.matcher(line);
      while (m.find()) {
        String link = m.group(1);
        if (link.matches("[a-zA-Z][a-zA-Z+.-]*:.*")) {
          continue; // https:, mailto:: not ours to check offline
        }
        int hash = link.indexOf('#');
        String path = hash < 0 ? link : link.substring(0, hash);
        Path target =
            path.isEmpty() ? file : file.toAbsolutePath().getParent().resolve(path).normalize();
        if (!Files.exists(target)) {
          found.add(new Finding(file, i + 1, "a link to a missing file", link));
        } else if (hash >= 0 && target.toString().endsWith(".md")) {
          String anchor = link.substring(hash + 1);
          if (!anchors.computeIfAbsent(target, PublishedDocs::anchors).contains(anchor)) {
            found.add(new Finding(file, i + 1, "a link to a missing heading", link));
          }
        }
      }
    }
    return found;
  }

  /** The anchors GitHub gives the headings of a Markdown file. */
  static Set<String> anchors(Path file) {
    Set<String> anchors = new HashSet<>();
    boolean code = false;
    for (String line : lines(file)) {
      if (FENCE.matcher(line).find()) {
        code = !code;
        continue;
      }
      Matcher m = HEADING.matcher(line);
      if (!code && m.matches()) {
        String base = slug(m.group(1));
        String slug = base;
        for (int n = 1; !anchors.add(slug); n++) {
          slug = base + "-" + n;
        }
      }
    }
    return anchors;
  }

  /** GitHub's heading slug: lower case, punctuation dropped, each space a hyphen. */
  static String slug(String heading) {
    return heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
        .replace(' ', '-');
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String excerpt(String line, int at) {
    int from = Math.max(0, at - 30);
    int to = Math.min(line.length(), at + 50);
    return (from > 0 ? "…" : "") + line.substring(from, to) + (to < line.length() ? "…" : "");
  }
}
