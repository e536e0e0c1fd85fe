package io.queuebridge.core.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.queuebridge.core.errors.InvalidConfigException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class TopicFiltersTest {

  // ---- BEHAVIOUR T-MATCH ----

  /** filter, topic, expected — the examples and edge rules of BEHAVIOUR T-MATCH. */
  static Stream<Arguments> matchTable() {
    return Stream.of(
        // the examples of BEHAVIOUR T-MATCH
        Arguments.of("foo/+", "foo/bar", true),
        Arguments.of("foo/+", "foo", false),
        Arguments.of("foo/+", "foo/bar/baz", false),
        Arguments.of("foo/#", "foo", true),
        Arguments.of("#", "$SYS/monitor/Clients", false),
        Arguments.of("$SYS/#", "$SYS/monitor/Clients", true),
        Arguments.of("+/+", "/foo", true),
        // '#' matches the rest, including nothing
        Arguments.of("#", "a", true),
        Arguments.of("#", "a/b/c", true),
        Arguments.of("#", "/", true),
        Arguments.of("foo/#", "foo/bar/baz", true),
        Arguments.of("foo/#", "foo/", true),
        Arguments.of("foo/#", "foobar", false),
        Arguments.of("foo/bar/#", "foo", false),
        // '+' is exactly one level, which may be empty
        Arguments.of("+", "a", true),
        Arguments.of("+", "a/b", false),
        Arguments.of("+", "/", false),
        Arguments.of("foo/+", "foo/", true),
        Arguments.of("+/bar", "/bar", true),
        Arguments.of("+/+/+", "a//c", true),
        // empty levels are real levels
        Arguments.of("a//b", "a//b", true),
        Arguments.of("a//b", "a/b", false),
        Arguments.of("a/+/b", "a//b", true),
        Arguments.of("a/", "a", false),
        Arguments.of("a", "a/", false),
        Arguments.of("/", "/", true),
        // literals must be equal and both must end together
        Arguments.of("a/b", "a/b", true),
        Arguments.of("a/b", "a/bc", false),
        Arguments.of("a/bc", "a/b", false),
        Arguments.of("a/b", "a/b/c", false),
        Arguments.of("a/b/c", "a/b", false),
        Arguments.of("A/b", "a/b", false),
        // '$' topics only match '$' filters with a literal first level
        Arguments.of("+/monitor/Clients", "$SYS/monitor/Clients", false),
        Arguments.of("$SYS/+/Clients", "$SYS/monitor/Clients", true),
        Arguments.of("$SYS/monitor/Clients", "$SYS/monitor/Clients", true),
        Arguments.of("$SYS", "SYS", false),
        Arguments.of("$SYS/#", "SYS/x", false),
        Arguments.of("$SYS/#", "$SYS", true),
        // identical strings first, even for a malformed filter
        Arguments.of("a/#/b", "a/#/b", true),
        Arguments.of("$", "$", true),
        // $share is not unwrapped: it is a literal '$' filter
        Arguments.of("$share/g/a/#", "a/b", false),
        Arguments.of("$share/g/a/#", "$share/g/a/b", true),
        // either side empty or null
        Arguments.of("", "a", false),
        Arguments.of("a", "", false),
        Arguments.of("", "", false),
        Arguments.of(null, "a", false),
        Arguments.of("a", null, false));
  }

  @ParameterizedTest(name = "matches({0}, {1}) == {2}")
  @MethodSource("matchTable")
  void matchesFollowsTheRulesOfSection41(String filter, String topic, boolean expected) {
    assertThat(TopicFilters.matches(filter, topic)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "reference({0}, {1}) == {2}")
  @MethodSource("matchTable")
  void splitReferenceAgreesWithTheTable(String filter, String topic, boolean expected) {
    assertThat(SplitTopicMatcher.matches(filter, topic)).isEqualTo(expected);
  }

  @Test
  void indexWalkingMatcherAgreesWithSplitReferenceOnAllThreeLevelCombinations() {
    List<String> all = combinations(List.of("a", "b", "+", "#", "$sys", ""), 3);
    assertThat(all).hasSize(6 + 36 + 216);

    List<String> disagreements = new ArrayList<>();
    int matched = 0;
    for (String filter : all) {
      for (String topic : all) {
        boolean expected = SplitTopicMatcher.matches(filter, topic);
        if (TopicFilters.matches(filter, topic) != expected) {
          disagreements.add("'" + filter + "' vs '" + topic + "': reference says " + expected);
        }
        if (expected) {
          matched++;
        }
      }
    }
    assertThat(disagreements).isEmpty();
    // both outcomes are well represented, so the comparison is not vacuous
    assertThat(matched).isBetween(1_000, all.size() * all.size() - 1_000);
  }

  @Test
  void matchesAndReferenceAgreeOnRandomLongerFilters() {
    List<String> levels = List.of("a", "b", "+", "#", "$sys", "", "ab", "$");
    Random random = new Random(42);
    List<String> disagreements = new ArrayList<>();
    for (int n = 0; n < 50_000; n++) {
      String filter = randomPath(random, levels, 6);
      String topic = randomPath(random, levels, 6);
      if (TopicFilters.matches(filter, topic) != SplitTopicMatcher.matches(filter, topic)) {
        disagreements.add("'" + filter + "' vs '" + topic + "'");
      }
    }
    assertThat(disagreements).isEmpty();
  }

  static List<String> combinations(List<String> levels, int maxLevels) {
    List<String> out = new ArrayList<>();
    List<String> previous = List.of("");
    for (int depth = 1; depth <= maxLevels; depth++) {
      List<String> next = new ArrayList<>();
      for (String prefix : previous) {
        for (String level : levels) {
          next.add(depth == 1 ? level : prefix + "/" + level);
        }
      }
      out.addAll(next);
      previous = next;
    }
    return out;
  }

  static String randomPath(Random random, List<String> levels, int maxLevels) {
    int depth = 1 + random.nextInt(maxLevels);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < depth; i++) {
      if (i > 0) {
        sb.append('/');
      }
      sb.append(levels.get(random.nextInt(levels.size())));
    }
    return sb.toString();
  }

  // ---- validation (BEHAVIOUR T-VALID) ----

  @ParameterizedTest
  @ValueSource(
      strings = {
        "a",
        "a/b",
        "+",
        "#",
        "a/+",
        "a/#",
        "+/+",
        "+/#",
        "a/+/c/#",
        "/",
        "a//b",
        "/#",
        "$SYS/#",
        "$SYS/+/Clients",
        "$share",
        "$share/g/a/#",
        "$share/g/#",
        "$share/g/+/x",
        "$share/g/a/b",
        "caf\u00e9/\uD83D\uDE00"
      })
  void validFiltersPass(String filter) {
    assertThatCode(() -> TopicFilters.validateFilter(filter)).doesNotThrowAnyException();
  }

  /** filter, a fragment of the rule the error must name. */
  static Stream<Arguments> invalidFilters() {
    return Stream.of(
        Arguments.of("", "non-empty topic filter"),
        Arguments.of(null, "non-empty topic filter"),
        Arguments.of("#/x", "'#' only as a whole level and only as the last level"),
        Arguments.of("a/#/b", "'#' only as a whole level and only as the last level"),
        Arguments.of("a#", "'#' only as a whole level and only as the last level"),
        Arguments.of("#a", "'#' only as a whole level and only as the last level"),
        Arguments.of("a/#/", "'#' only as a whole level and only as the last level"),
        Arguments.of("##", "'#' only as a whole level and only as the last level"),
        Arguments.of("a+/b", "'+' only as a whole level"),
        Arguments.of("a/b+", "'+' only as a whole level"),
        Arguments.of("++", "'+' only as a whole level"),
        Arguments.of("a\0b", "no NUL character"),
        Arguments.of("a/\uD800", "unpaired high surrogate"),
        Arguments.of("\uD800/a", "unpaired high surrogate"),
        Arguments.of("a\uDC00", "unpaired low surrogate"),
        Arguments.of("$share/", "$share/<name>/<filter>"),
        Arguments.of("$share/g", "$share/<name>/<filter>"),
        Arguments.of("$share/g/", "a non-empty filter after $share/<name>/"),
        Arguments.of("$share//x", "a non-empty share name"),
        Arguments.of("$share/g+/x", "a share name without '+' or '#'"),
        Arguments.of("$share/#/x", "a share name without '+' or '#'"),
        Arguments.of("$share/g/a/#/b", "'#' only as a whole level and only as the last level"),
        Arguments.of("$share/g/a+", "'+' only as a whole level"));
  }

  @ParameterizedTest(name = "validateFilter({0}) fails: {1}")
  @MethodSource("invalidFilters")
  void invalidFiltersAreRejectedNamingTheFilterAndTheRule(String filter, String rule) {
    InvalidConfigException e =
        catchThrowableOfType(
            InvalidConfigException.class, () -> TopicFilters.validateFilter(filter));
    assertThat(e).as("validateFilter(%s) must throw", filter).isNotNull();
    assertThat(e.field()).isEqualTo("topic filter");
    assertThat(e.value()).isEqualTo(filter);
    assertThat(e.getMessage())
        .contains("topic filter")
        .contains(filter == null ? "null" : "'" + shownSafely(filter) + "'")
        .contains(rule);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"a", "a/b", "/", "a//b", "/a/", "$SYS/monitor", "$share/g/a", "\uD83D\uDE00"})
  void validTopicNamesPass(String topic) {
    assertThatCode(() -> TopicFilters.validateTopicName(topic)).doesNotThrowAnyException();
  }

  static Stream<Arguments> invalidTopicNames() {
    return Stream.of(
        Arguments.of("", "non-empty topic name"),
        Arguments.of(null, "non-empty topic name"),
        Arguments.of("a/+", "without the wildcards"),
        Arguments.of("+", "without the wildcards"),
        Arguments.of("a/#", "without the wildcards"),
        Arguments.of("a#b", "without the wildcards"),
        Arguments.of("a\0", "no NUL character"),
        Arguments.of("a\uD83D", "unpaired high surrogate"),
        Arguments.of("\uDE00a", "unpaired low surrogate"));
  }

  @ParameterizedTest(name = "validateTopicName({0}) fails: {1}")
  @MethodSource("invalidTopicNames")
  void invalidTopicNamesAreRejectedNamingTheTopicAndTheRule(String topic, String rule) {
    InvalidConfigException e =
        catchThrowableOfType(
            InvalidConfigException.class, () -> TopicFilters.validateTopicName(topic));
    assertThat(e).as("validateTopicName(%s) must throw", topic).isNotNull();
    assertThat(e.field()).isEqualTo("topic");
    assertThat(e.value()).isEqualTo(topic);
    assertThat(e.getMessage())
        .contains(topic == null ? "null" : "'" + shownSafely(topic) + "'")
        .contains(rule);
  }

  /** How an error message shows a value: NUL and lone surrogates as {@code \\uXXXX}. */
  private static String shownSafely(String s) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean pair =
          Character.isHighSurrogate(c)
              && i + 1 < s.length()
              && Character.isLowSurrogate(s.charAt(i + 1));
      if (pair) {
        sb.append(c).append(s.charAt(++i));
      } else if (Character.isISOControl(c) || Character.isSurrogate(c)) {
        sb.append(String.format("\\u%04X", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  @Test
  void validationAcceptsExactlyTheFiltersWithAWellPlacedHash() {
    // With whole-level wildcards only, the one way to be invalid (besides "") is a misplaced '#',
    // the case where matches() and the index deliberately differ.
    int valid = 0;
    for (String filter : combinations(List.of("a", "+", "#", "", "$s"), 3)) {
      int hash = filter.indexOf('#');
      boolean wellPlaced =
          hash < 0
              || (hash == filter.length() - 1 && (hash == 0 || filter.charAt(hash - 1) == '/'));
      boolean expected = !filter.isEmpty() && wellPlaced;
      if (expected) {
        valid++;
        assertThatCode(() -> TopicFilters.validateFilter(filter))
            .as("'%s' is valid", filter)
            .doesNotThrowAnyException();
      } else {
        assertThat(
                catchThrowableOfType(
                    InvalidConfigException.class, () -> TopicFilters.validateFilter(filter)))
            .as("'%s' is invalid", filter)
            .isNotNull();
      }
    }
    assertThat(valid).isBetween(1, 154);
  }
}
