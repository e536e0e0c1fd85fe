package io.queuebridge.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.cli.CommandRunner;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * The console in a real browser (headless Chromium) over a real file store: what an operator sees
 * and does, page by page, and that each change lands in the store as the command line would make
 * it.
 */
class ConsoleBrowserTest {
  private static final String TOKEN = "browser-test-token-0123456789";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private Path config;
  private Console console;
  private ChromeDriver browser;
  private CommandRunner cli;

  @BeforeEach
  void start() throws Exception {
    config = ConsoleFixture.create(dir);
    browser = Browser.start();
    console = ConsoleFixture.start(config, TOKEN);
    cli = CommandRunner.create(Clock.systemUTC());
  }

  @AfterEach
  void stop() {
    if (browser != null) {
      browser.quit();
    }
    if (console != null) {
      console.close();
    }
    if (cli != null) {
      cli.close();
    }
  }

  private String url(String path) {
    return console.url() + path.substring(1);
  }

  private JsonNode command(String... args) throws Exception {
    List<String> all = new java.util.ArrayList<>(List.of(args));
    all.addAll(List.of("--config", config.toString(), "-o", "json"));
    CommandRunner.Result r = cli.run(all);
    assertThat(r.ok()).as("%s: %s", all, r.err()).isTrue();
    return JSON.readTree(r.out());
  }

  /**
   * The text of the element {@code css} selects, read again if the page's own refresh replaced it
   * meanwhile; a failure names the page it was not on.
   */
  private String text(String css) {
    for (int attempt = 0; ; attempt++) {
      try {
        List<WebElement> found = browser.findElements(By.cssSelector(css));
        assertThat(found)
            .as(
                "%s on %s:%n%s",
                css, browser.getCurrentUrl(), browser.findElement(By.tagName("main")).getText())
            .isNotEmpty();
        return found.get(0).getText();
      } catch (StaleElementReferenceException e) {
        if (attempt == 5) {
          throw e;
        }
      }
    }
  }

  /** The offsets of the messages the page shows. */
  private List<String> offsets() {
    return browser.findElements(By.cssSelector("article.message")).stream()
        .map(e -> e.getAttribute("data-offset"))
        .toList();
  }

  @Test
  void anOperatorBrowsesTheQueuesAndTheirMessages() throws Exception {
    browser.get(url("/"));
    assertThat(browser.getTitle()).isEqualTo("Overview · Queue Bridge");
    assertThat(text("#mode")).contains("Log in to make changes");
    assertThat(text("tr[data-queue='jobs'] .messages"))
        .isEqualTo(String.valueOf(ConsoleFixture.JOBS));
    assertThat(text("tr[data-queue='$dlq/jobs'] .messages")).isEqualTo("2");
    // committed 3 (0 acknowledged, 1 and 2 dead-lettered): the rest is lag, 3 held among it
    assertThat(text("tr[data-queue='jobs'] .lag"))
        .isEqualTo(String.valueOf(ConsoleFixture.JOBS - 3));
    // the chart draws the server's samples (one a second here) once there are some
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              browser.navigate().refresh();
              return !browser.findElements(By.cssSelector("#chart canvas")).isEmpty();
            });
    Browser.screenshot(browser, "overview");

    // the page follows the store by itself: a message published now shows up without a reload
    Object loaded = browser.executeScript("return window.performance.timeOrigin;");
    ConsoleFixture.publish(dir, "jobs", "job-late");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(text("tr[data-queue='jobs'] .messages"))
                    .isEqualTo(String.valueOf(ConsoleFixture.JOBS + 1)));
    assertThat(browser.executeScript("return window.performance.timeOrigin;"))
        .as("the same page, updated in place")
        .isEqualTo(loaded);

    Browser.clickThrough(browser, By.linkText("jobs"));
    assertThat(browser.getTitle()).startsWith("jobs");
    assertThat(text("tr[data-group='workers']")).contains("delivering");
    assertThat(text("table.pending")).contains("w-1");
    assertThat(text("#dlq-link")).contains("$dlq/jobs (2)");
    Browser.screenshot(browser, "queue");

    Browser.clickThrough(browser, By.id("browse"));
    assertThat(offsets()).containsExactly("0", "1", "2", "3", "4", "5", "6");
    assertThat(text("article.message")).contains("job-0", "send mail 0", "trace", "t-0");
    Browser.screenshot(browser, "messages");

    // paged: two per page, then the next page from where the first ended
    browser.get(url("/messages?s=1&q=jobs&limit=2"));
    assertThat(offsets()).containsExactly("0", "1");
    Browser.clickThrough(browser, By.id("next-page"));
    assertThat(offsets()).containsExactly("2", "3");

    // by key
    WebElement key = browser.findElement(By.name("key"));
    key.sendKeys("job-4");
    browser.findElement(By.name("from")).clear();
    Browser.clickThrough(browser, By.cssSelector("#filters button"));
    assertThat(offsets()).containsExactly("4");

    // by time: from a time after every message, nothing
    browser.get(url("/messages?s=1&q=jobs&from=2999-01-01T00:00:00Z"));
    assertThat(text("#no-messages")).isEqualTo("No messages there.");

    // a large value is cut, and downloads whole
    browser.get(url("/messages?s=1&q=blobs"));
    assertThat(text("article.message .value"))
        .contains("cut at 400 of " + ConsoleFixture.BIG + " characters");
    String download =
        browser.findElement(By.cssSelector("article.message .value a")).getAttribute("href");
    HttpResponse<byte[]> whole =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(download)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    assertThat(whole.statusCode()).isEqualTo(200);
    assertThat(new String(whole.body(), java.nio.charset.StandardCharsets.UTF_8))
        .isEqualTo("x".repeat(ConsoleFixture.BIG));
  }

  @Test
  void badInputGetsAClearMessageOnThePage() {
    browser.get(url("/queue?s=1&q=nope"));
    assertThat(text("#error")).contains("queue 'nope' not found");
    browser.get(url("/messages?s=1&q=jobs&from=999"));
    assertThat(text("#error")).contains("--from 999: not an offset of queue 'jobs'");
    browser.get(url("/messages?s=1&q=jobs&limit=many"));
    assertThat(text("#error")).contains("limit 'many'", "from 1 to 500");
    browser.get(url("/queue?s=7&q=jobs"));
    assertThat(text("#error")).contains("no store numbered '7'");
    browser.get(url("/nothing-here"));
    assertThat(text("#error")).contains("no page at /nothing-here");
  }

  @Test
  void aChangeWithoutTheTokenIsRefusedAndChangesNothing() throws Exception {
    browser.get(url("/dead-letters?s=1&q=%24dlq%2Fjobs"));
    assertThat(browser.findElements(By.id("redrive")))
        .as("no change offered before login")
        .isEmpty();

    browser.get(url("/login"));
    browser.findElement(By.id("token")).sendKeys("not-the-token");
    Browser.clickThrough(browser, By.id("login"));
    assertThat(text("#error")).contains("not this console's login token");

    // a form posted with no session: refused
    HttpResponse<String> refused =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url("/redrive")))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "s=1&q=%24dlq%2Fjobs&count=all&confirm=yes"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(403);
    assertThat(refused.body()).contains("log in with the console");
    assertThat(command("describe", "$dlq/jobs").get("messages").asLong()).isEqualTo(2);
  }

  @Test
  void aLoggedInOperatorRedrivesOneDeadLetterAndPausesAGroup() throws Exception {
    browser.get(url("/login?next=/dead-letters%3Fs%3D1%26q%3D%2524dlq%252Fjobs"));
    browser.findElement(By.id("token")).sendKeys(TOKEN);
    Browser.clickThrough(browser, By.id("login"));
    assertThat(browser.getTitle()).startsWith("Dead letters: $dlq/jobs");
    assertThat(text("#dlq-count .count")).isEqualTo("2");
    assertThat(text("article.message")).contains("x-dlq-");
    Browser.screenshot(browser, "dead-letters");

    Browser.clickThrough(browser, By.id("redrive")); // count 1: the oldest
    assertThat(text("#plan")).contains("1 would move");
    assertThat(command("describe", "$dlq/jobs").get("messages").asLong())
        .as("the dry run changed nothing")
        .isEqualTo(2);
    Browser.screenshot(browser, "redrive-confirm");
    Browser.clickThrough(browser, By.id("confirm"));
    assertThat(text("#result")).contains("1 moved", "1 left");
    Browser.clickThrough(browser, By.id("back"));
    assertThat(text("#dlq-count .count")).isEqualTo("1");
    assertThat(command("describe", "jobs").get("messages").asLong())
        .isEqualTo(ConsoleFixture.JOBS + 1);

    // delete the dead letter left: a confirmation first, then it is gone
    Browser.clickThrough(browser, By.id("purge"));
    assertThat(text("#plan")).contains("removes the 1 messages");
    assertThat(command("describe", "$dlq/jobs").get("messages").asLong()).isEqualTo(1);
    Browser.clickThrough(browser, By.id("confirm"));
    assertThat(text("#result")).contains("1 messages removed");
    assertThat(command("describe", "$dlq/jobs").get("messages").asLong()).isZero();

    browser.get(url("/queue?s=1&q=jobs"));
    Browser.clickThrough(browser, By.cssSelector("tr[data-group='workers'] button.pause"));
    assertThat(text("tr[data-group='workers'] .state")).isEqualTo("paused");
    assertThat(command("groups", "jobs", "workers").get(0).get("paused").asBoolean()).isTrue();
    Browser.clickThrough(browser, By.cssSelector("tr[data-group='workers'] button.resume"));
    assertThat(text("tr[data-group='workers'] .state")).isEqualTo("delivering");
    assertThat(command("groups", "jobs", "workers").get(0).get("paused").asBoolean()).isFalse();
  }

  @Test
  void theOverviewFitsANarrowScreen() {
    browser.manage().window().setSize(new Dimension(400, 900));
    browser.get(url("/"));
    Long overflow =
        (Long)
            browser.executeScript(
                "return document.documentElement.scrollWidth - window.innerWidth;");
    assertThat(overflow).as("page wider than the screen by").isLessThanOrEqualTo(0L);
    browser.get(url("/messages?s=1&q=jobs"));
    overflow =
        (Long)
            browser.executeScript(
                "return document.documentElement.scrollWidth - window.innerWidth;");
    assertThat(overflow).isLessThanOrEqualTo(0L);
  }
}
