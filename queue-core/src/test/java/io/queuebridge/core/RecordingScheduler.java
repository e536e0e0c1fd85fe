package io.queuebridge.core;

import java.util.ArrayList;
import java.util.List;

/**
 * Records the manager's delivery-scheduling hook calls ({@code schedule:q}, {@code unschedule:q}).
 */
final class RecordingScheduler implements QueueManager.DeliveryScheduler {
  private final List<String> calls = new ArrayList<>();

  @Override
  public synchronized void schedule(String queue) {
    calls.add("schedule:" + queue);
  }

  @Override
  public synchronized void unschedule(String queue) {
    calls.add("unschedule:" + queue);
  }

  synchronized void clear() {
    calls.clear();
  }

  synchronized List<String> calls() {
    return List.copyOf(calls);
  }
}
