package io.queuebridge.core.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class TopicIndexTest {
  private final TopicIndex index = new TopicIndex();

  @Test
  void findsQueuesWhosePatternsMatch() {
    index.addQueue("orders", List.of("orders/+/created"));
    index.addQueue("all-eu", List.of("eu/#"));
    index.addQueue("exact", List.of("eu/orders/created"));

    assertThat(index.findMatching("orders/42/created")).containsExactly("orders");
    assertThat(index.findMatching("orders/42/deleted")).isEmpty();
    assertThat(index.findMatching("eu/orders/created")).containsExactly("all-eu", "exact");
    assertThat(index.findMatching("eu")).containsExactly("all-eu");
    assertThat(index.findMatching("us/orders/created")).isEmpty();
  }

  @Test
  void plusMatchesOneLevelWhichMayBeEmptyAndEmptyLevelsAreReal() {
    index.addQueue("q", List.of("+/+"));
    index.addQueue("empty-middle", List.of("a//b"));

    assertThat(index.findMatching("/foo")).containsExactly("q");
    assertThat(index.findMatching("a/")).containsExactly("q");
    assertThat(index.findMatching("foo")).isEmpty();
    assertThat(index.findMatching("a/b/c")).isEmpty();
    assertThat(index.findMatching("a//b")).containsExactly("empty-middle");
    assertThat(index.findMatching("a/b")).containsExactly("q");
  }

  @Test
  void hashMatchesTheRestIncludingNothing() {
    index.addQueue("q", List.of("a/#"));

    assertThat(index.findMatching("a")).containsExactly("q");
    assertThat(index.findMatching("a/")).containsExactly("q");
    assertThat(index.findMatching("a/b/c/d")).containsExactly("q");
    assertThat(index.findMatching("ab")).isEmpty();
    assertThat(index.findMatching("b/a")).isEmpty();
  }

  @Test
  void addQueueReplacesPreviousFilters() {
    index.addQueue("q", List.of("a/b", "c/#"));
    index.addQueue("q", List.of("x/+"));

    assertThat(index.filtersOf("q")).containsExactly("x/+");
    assertThat(index.findMatching("a/b")).isEmpty();
    assertThat(index.findMatching("c/d")).isEmpty();
    assertThat(index.findMatching("x/y")).containsExactly("q");
    // only the nodes of x/+ are left: root, x, +
    assertThat(index.nodeCount()).isEqualTo(3);
  }

  @Test
  void addingTheSamePatternForTheSameQueueTwiceIsANoOp() {
    index.addQueue("q", List.of("a/+", "a/+"));
    int nodes = index.nodeCount();
    index.addQueue("q", List.of("a/+"));

    assertThat(index.filtersOf("q")).containsExactly("a/+");
    assertThat(index.nodeCount()).isEqualTo(nodes);
    assertThat(index.findMatching("a/b")).containsExactly("q");
    index.removeQueue("q");
    assertThat(index.findMatching("a/b")).isEmpty();
    assertThat(index.nodeCount()).isZero();
  }

  @Test
  void removalPrunesEmptyNodes() {
    index.addQueue("q1", List.of("a/b/c/d"));
    assertThat(index.nodeCount()).isEqualTo(5); // root, a, b, c, d
    index.addQueue("q2", List.of("a/b/x", "a/+/#", "$SYS/y"));
    // plain: root, a, b, c, d, x, +, # ; dollar: root, $SYS, y
    assertThat(index.nodeCount()).isEqualTo(11);

    index.removeQueue("q1");
    assertThat(index.nodeCount()).isEqualTo(9); // c and d pruned, b kept for x
    index.removeQueue("q2");
    assertThat(index.nodeCount()).isZero();
    assertThat(index.findMatching("a/b/c/d")).isEmpty();
    assertThat(index.filtersOf("q1")).isEmpty();
  }

  @Test
  void replacingFiltersPrunesTheDroppedPaths() {
    index.addQueue("q", List.of("a/b/c", "a/d"));
    assertThat(index.nodeCount()).isEqualTo(5); // root, a, b, c, d
    index.addQueue("q", List.of("a/d"));
    assertThat(index.nodeCount()).isEqualTo(3); // root, a, d
    index.addQueue("q", List.of());
    assertThat(index.nodeCount()).isZero();
    assertThat(index.filtersOf("q")).isEmpty();
    assertThat(index.findMatching("a/d")).isEmpty();
  }

  @Test
  void aSharedPatternSurvivesUntilItsLastQueueLeaves() {
    index.addQueue("q1", List.of("s/+/t"));
    index.addQueue("q2", List.of("s/+/t"));
    index.addQueue("q3", List.of("s/+/t", "other"));
    int nodes = index.nodeCount();

    index.removeQueue("q2");
    assertThat(index.findMatching("s/x/t")).containsExactly("q1", "q3");
    index.addQueue("q1", List.of("other"));
    assertThat(index.findMatching("s/x/t")).containsExactly("q3");
    assertThat(index.nodeCount()).isEqualTo(nodes);
    index.removeQueue("q3");
    assertThat(index.findMatching("s/x/t")).isEmpty();
    assertThat(index.findMatching("other")).containsExactly("q1");
    assertThat(index.nodeCount()).isEqualTo(2); // root, other
  }

  @Test
  void dollarTopicsOnlyConsultDollarPatterns() {
    index.addQueue("everything", List.of("#"));
    index.addQueue("plus", List.of("+/monitor/+"));
    index.addQueue("sys", List.of("$SYS/#"));
    index.addQueue("sys-monitor", List.of("$SYS/monitor/+"));

    assertThat(index.findMatching("$SYS/monitor/Clients")).containsExactly("sys", "sys-monitor");
    assertThat(index.findMatching("$SYS/x")).containsExactly("sys");
    assertThat(index.findMatching("$SYS")).containsExactly("sys");
    assertThat(index.findMatching("SYS/monitor/Clients")).containsExactly("everything", "plus");
    assertThat(index.findMatching("a")).containsExactly("everything");
  }

  @Test
  void firstMatchOrderIsTheTrieWalkOrder() {
    index.addQueue("plus-middle", List.of("a/+/c"));
    index.addQueue("exact", List.of("a/b/c"));
    index.addQueue("root-hash", List.of("#"));
    index.addQueue("a-hash", List.of("a/#"));
    index.addQueue("ab-hash", List.of("a/b/#"));
    index.addQueue("plus-first", List.of("+/b/c"));
    index.addQueue("exact-too", List.of("a/b/c"));

    // depth-first: a '#' child as soon as it is reached, then the literal subtree, then '+';
    // at the end of the topic a node's own queues (in registration order) before its '#' child
    assertThat(index.findMatching("a/b/c"))
        .containsExactly(
            "root-hash", "a-hash", "ab-hash", "exact", "exact-too", "plus-middle", "plus-first");
  }

  @Test
  void aQueueMatchedByManyPatternsAppearsOnceAtItsFirstMatch() {
    index.addQueue("q1", List.of("+/b", "a/b", "#"));
    index.addQueue("q2", List.of("a/+"));

    assertThat(index.findMatching("a/b")).containsExactly("q1", "q2");
  }

  @Test
  void deduplicationStillHoldsBeyondTheSetThreshold() {
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 3 * TopicIndex.DEDUP_SET_THRESHOLD; i++) {
      String q = "q" + i;
      index.addQueue(q, List.of("x/#", "x/y", "+/y", "x/+", "#"));
      expected.add(q);
    }
    // every queue is first met through '#', in registration order, and only once
    assertThat(index.findMatching("x/y")).containsExactlyElementsOf(expected);
  }

  @Test
  void misplacedHashIsALiteralPathThatCapturesNothing() {
    index.addQueue("misplaced-root", List.of("#/a"));
    index.addQueue("misplaced-middle", List.of("a/#/b"));
    index.addQueue("glued", List.of("a#"));

    for (String topic : List.of("a", "x/a", "a/b", "a/x/b", "a/x", "a#/b", "b/a/b")) {
      assertThat(index.findMatching(topic)).as(topic).isEmpty();
    }
    // matches() would have let the '#' match the rest; the index deliberately does not
    assertThat(TopicFilters.matches("#/a", "x/a")).isTrue();
    assertThat(index.filtersOf("misplaced-root")).containsExactly("#/a");
    // the literal level "a#" is an ordinary literal
    assertThat(index.findMatching("a#")).containsExactly("glued");
  }

  @Test
  void sharedSubscriptionFiltersAreIndexedLiterallyLikeTheMatcher() {
    index.addQueue("shared", List.of("$share/g/a/#"));

    assertThat(index.findMatching("a/b")).isEmpty();
    assertThat(TopicFilters.matches("$share/g/a/#", "a/b")).isFalse();
    assertThat(index.findMatching("$share/g/a/b")).containsExactly("shared");
    assertThat(TopicFilters.matches("$share/g/a/#", "$share/g/a/b")).isTrue();
  }

  @Test
  void noMatchReturnsTheSharedEmptyList() {
    assertThat(index.findMatching("a/b")).isSameAs(List.of());
    index.addQueue("q", List.of("x/+", "$SYS/#"));
    assertThat(index.findMatching("a/b")).isSameAs(List.of());
    assertThat(index.findMatching("x/y/z")).isSameAs(List.of());
    assertThat(index.findMatching("$OTHER")).isSameAs(List.of());
    assertThat(index.findMatching("")).isSameAs(List.of());
    assertThat(index.findMatching(null)).isSameAs(List.of());
  }

  @Test
  void resultsAreNewListsAndIntrospectionIsACopy() {
    index.addQueue("q", new ArrayList<>(List.of("a")));
    List<String> first = index.findMatching("a");
    first.add("intruder");
    assertThat(index.findMatching("a")).containsExactly("q");

    List<String> filters = new ArrayList<>(List.of("b"));
    index.addQueue("r", filters);
    filters.add("c");
    assertThat(index.filtersOf("r")).containsExactly("b");
    assertThatThrownBy(() -> index.filtersOf("r").add("d"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void removingAnUnknownQueueIsIgnoredAndNullArgumentsAreRejected() {
    index.addQueue("q", List.of("a"));
    index.removeQueue("unknown");
    index.removeQueue(null);
    assertThat(index.findMatching("a")).containsExactly("q");

    assertThatThrownBy(() -> index.addQueue(null, List.of("a")))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("queue");
    assertThatThrownBy(() -> index.addQueue("q", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("filters");
    assertThatThrownBy(() -> index.addQueue("q", Arrays.asList("b", null)))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("filters");
    // a rejected call changes nothing
    assertThat(index.filtersOf("q")).containsExactly("a");
  }

  /**
   * The trie against the linear definition: a queue matches when one of its well-formed filters
   * matches the topic per {@link TopicFilters#matches}. Compared as sets (order is pinned above).
   */
  @Test
  void findMatchingAgreesWithALinearScanOverRandomFiltersAndTopics() {
    Random random = new Random(20_240_521);
    List<String> filterLevels = List.of("a", "b", "c", "", "+", "+", "#", "$sys", "$share", "g");
    List<String> topicLevels = List.of("a", "b", "c", "", "$sys", "$share", "g");
    int comparisons = 0;
    int nonEmpty = 0;
    for (int round = 0; round < 40; round++) {
      TopicIndex trie = new TopicIndex();
      Map<String, List<String>> linear = new TreeMap<>();
      for (int op = 0; op < 60; op++) {
        String queue = "q" + random.nextInt(25);
        if (random.nextInt(6) == 0) {
          trie.removeQueue(queue);
          linear.remove(queue);
          continue;
        }
        List<String> filters = new ArrayList<>();
        for (int k = random.nextInt(4); k > 0; k--) {
          filters.add(TopicFiltersTest.randomPath(random, filterLevels, 4));
        }
        trie.addQueue(queue, filters);
        linear.put(queue, filters);
      }
      for (int t = 0; t < 300; t++) {
        String topic = TopicFiltersTest.randomPath(random, topicLevels, 5);
        Set<String> expected = new HashSet<>();
        linear.forEach(
            (queue, filters) -> {
              for (String f : filters) {
                if (isWellPlaced(f) && TopicFilters.matches(f, topic)) {
                  expected.add(queue);
                }
              }
            });
        List<String> actual = trie.findMatching(topic);
        assertThat(new HashSet<>(actual)).as("topic '%s' in %s", topic, linear).isEqualTo(expected);
        assertThat(actual).doesNotHaveDuplicates();
        comparisons++;
        if (!expected.isEmpty()) {
          nonEmpty++;
        }
      }
      for (String queue : linear.keySet()) {
        assertThat(trie.filtersOf(queue))
            .containsExactlyElementsOf(new LinkedHashSet<>(linear.get(queue)));
      }
    }
    assertThat(comparisons).isEqualTo(40 * 300);
    // enough of both outcomes for the comparison to mean something
    assertThat(nonEmpty).isBetween(comparisons / 10, comparisons - comparisons / 10);
  }

  private static boolean isWellPlaced(String filter) {
    int hash = filter.indexOf('#');
    return hash < 0
        || (hash == filter.length() - 1 && (hash == 0 || filter.charAt(hash - 1) == '/'));
  }

  /**
   * Readers race writers. Stable queues are always visible in their order; the churning queue
   * appears at most once and only in one of the states a writer published; nothing throws.
   */
  @Test
  void concurrentReadersSeeConsistentResultsWhileWritersChurn() throws Exception {
    index.addQueue("stable-hash", List.of("t/#"));
    index.addQueue("stable-exact", List.of("t/x/y"));
    String topic = "t/x/y";
    List<String> withoutChurn = List.of("stable-hash", "stable-exact");
    // the churning queue's matching filter sits under '+', so it is met last
    List<String> withChurn = List.of("stable-hash", "stable-exact", "churn");

    int readers = 3;
    int writes = 20_000;
    ExecutorService pool = Executors.newFixedThreadPool(readers + 2);
    AtomicBoolean writing = new AtomicBoolean(true);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<Integer>> readerResults = new ArrayList<>();
      for (int r = 0; r < readers; r++) {
        readerResults.add(
            pool.submit(
                () -> {
                  start.await();
                  int reads = 0;
                  while (writing.get() || reads < 1_000) {
                    List<String> found = index.findMatching(topic);
                    if (!found.equals(withoutChurn) && !found.equals(withChurn)) {
                      throw new AssertionError("inconsistent result " + found);
                    }
                    List<String> none = index.findMatching("u/x/y");
                    if (!none.isEmpty()) {
                      throw new AssertionError("phantom match " + none);
                    }
                    reads++;
                  }
                  return reads;
                }));
      }
      Future<?> churner =
          pool.submit(
              () -> {
                start.await();
                for (int i = 0; i < writes; i++) {
                  switch (i % 3) {
                    case 0 -> index.addQueue("churn", List.of("t/+/y", "other/#"));
                    case 1 -> index.addQueue("churn", List.of("nomatch/+", "t/x"));
                    default -> index.removeQueue("churn");
                  }
                }
                return null;
              });
      Future<?> noise =
          pool.submit(
              () -> {
                start.await();
                for (int i = 0; i < writes; i++) {
                  String q = "noise" + (i / 2) % 50; // added at an even i, removed at the next
                  if (i % 2 == 0) {
                    index.addQueue(q, List.of("t/x/" + i, "t/" + (i % 7) + "/#", "$SYS/" + i));
                  } else {
                    index.removeQueue(q);
                  }
                }
                return null;
              });
      start.countDown();
      churner.get(60, TimeUnit.SECONDS);
      noise.get(60, TimeUnit.SECONDS);
      writing.set(false);
      for (Future<Integer> f : readerResults) {
        assertThat(f.get(60, TimeUnit.SECONDS)).isGreaterThanOrEqualTo(1_000);
      }
    } finally {
      writing.set(false);
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    // after the writers every noise queue was removed; churn's last state is "nomatch/+", "t/x"
    assertThat(index.filtersOf("churn")).containsExactly("nomatch/+", "t/x");
    index.removeQueue("churn");
    assertThat(index.findMatching(topic)).isEqualTo(withoutChurn);
    for (int i = 0; i < 50; i++) {
      assertThat(index.filtersOf("noise" + i)).isEmpty();
    }
    assertThat(index.nodeCount()).isEqualTo(5); // root, t, #, x, y
  }
}
