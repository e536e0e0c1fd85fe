package io.queuebridge.core;

/**
 * Where a manager is in its lifecycle (BEHAVIOUR M-START, Q-STOP): new, running or stopped. Every
 * collaborator of {@link QueueManager} asks it before touching the store ({@link #ensureUsable});
 * only {@link ManagerLifecycle} moves it on, under its lifecycle lock. Thread-safe: one volatile
 * word.
 */
final class LifecycleState {
  private enum State {
    NEW,
    RUNNING,
    STOPPED
  }

  private volatile State state = State.NEW;

  /** Refuses work once stopping has begun: throws {@link IllegalStateException} after stop. */
  void ensureUsable() {
    if (state == State.STOPPED) {
      throw new IllegalStateException("queue manager is stopped");
    }
  }

  /** Refuses a second start: throws {@link IllegalStateException} if running or stopped. */
  void ensureStartable() {
    if (state == State.RUNNING) {
      throw new IllegalStateException("queue manager already started");
    }
    if (state == State.STOPPED) {
      throw new IllegalStateException("queue manager is stopped; build a new one");
    }
  }

  /** Start completed. */
  void running() {
    state = State.RUNNING;
  }

  /** Stop began: every later {@link #ensureUsable} throws. */
  void stopped() {
    state = State.STOPPED;
  }
}
