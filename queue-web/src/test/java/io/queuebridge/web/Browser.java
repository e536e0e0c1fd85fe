package io.queuebridge.web;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Headless Chromium for the browser tests: Debian's {@code chromium} and {@code chromedriver} (what
 * {@code .ci/run} installs), or the ones {@code QUEUEBRIDGE_CHROMIUM} and {@code
 * QUEUEBRIDGE_CHROMEDRIVER} name. Where neither is found the tests are skipped with a message
 * saying so; under CI ({@code CI=true}) they fail instead, since CI installs both.
 */
public final class Browser {
  private Browser() {}

  public static ChromeDriver start() {
    Path chromium =
        find("QUEUEBRIDGE_CHROMIUM", List.of("/usr/bin/chromium", "/usr/bin/chromium-browser"));
    Path driver = find("QUEUEBRIDGE_CHROMEDRIVER", List.of("/usr/bin/chromedriver"));
    if (chromium == null || driver == null) {
      String why =
          "no headless Chromium here (expected /usr/bin/chromium and /usr/bin/chromedriver, from"
              + " Debian's chromium and chromium-driver packages, or QUEUEBRIDGE_CHROMIUM and"
              + " QUEUEBRIDGE_CHROMEDRIVER)";
      if ("true".equals(System.getenv("CI"))) {
        throw new IllegalStateException(why + "; CI installs them, so this is a failure");
      }
      Assumptions.abort("browser tests skipped: " + why);
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(chromium.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000");
    ChromeDriverService service =
        new ChromeDriverService.Builder().usingDriverExecutable(driver.toFile()).build();
    return new ChromeDriver(service, options);
  }

  /**
   * Clicks what {@code by} finds and waits until the page it leads to has replaced this one and has
   * loaded. A replaced page's element is reported stale, or (Chromium, now and then) as a node that
   * "does not belong to the document": both mean the page is gone.
   */
  public static void clickThrough(ChromeDriver browser, By by) {
    WebElement page = browser.findElement(By.tagName("html"));
    browser.findElement(by).click();
    WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(30));
    wait.until(
        d -> {
          try {
            page.isEnabled();
            return false;
          } catch (WebDriverException gone) { // StaleElementReferenceException among them
            return true;
          }
        });
    wait.until(d -> "complete".equals(browser.executeScript("return document.readyState;")));
  }

  private static Path find(String variable, List<String> candidates) {
    String named = System.getenv(variable);
    if (named != null && !named.isBlank()) {
      return Files.isExecutable(Path.of(named)) ? Path.of(named) : null;
    }
    return candidates.stream().map(Path::of).filter(Files::isExecutable).findFirst().orElse(null);
  }

  /**
   * Saves what the browser shows as {@code docs/console/<name>.png} when the docs are being updated
   * ({@code -Dqueuebridge.docs.update=true}); does nothing otherwise.
   */
  public static void screenshot(ChromeDriver browser, String name) throws IOException {
    if (!Boolean.getBoolean("queuebridge.docs.update")) {
      return;
    }
    Path dir = Path.of(System.getProperty("queuebridge.repo.dir", "..")).resolve("docs/console");
    Files.createDirectories(dir);
    Files.write(dir.resolve(name + ".png"), browser.getScreenshotAs(OutputType.BYTES));
  }
}
