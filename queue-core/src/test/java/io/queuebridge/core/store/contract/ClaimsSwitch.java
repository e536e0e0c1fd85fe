package io.queuebridge.core.store.contract;

import io.queuebridge.core.store.ConsumerGroupStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

/**
 * A group store that answers {@link ConsumerGroupStore#concurrentClaims()} as told and forwards
 * every other call, so a test or a benchmark runs the engine's concurrent (or sectioned) path on a
 * store that does not choose it. Reflective: each call costs a little more than a direct one.
 */
public final class ClaimsSwitch {
  private ClaimsSwitch() {}

  /** {@code groups}, answering {@code concurrentClaims()} with {@code concurrent}. */
  public static ConsumerGroupStore answering(ConsumerGroupStore groups, boolean concurrent) {
    return answering(groups, concurrent, () -> {});
  }

  /**
   * {@link #answering(ConsumerGroupStore, boolean)}, running {@code beforeSection} before the body
   * of every {@code atomically} call (a test holds the group's section with it).
   */
  public static ConsumerGroupStore answering(
      ConsumerGroupStore groups, boolean concurrent, Runnable beforeSection) {
    return (ConsumerGroupStore)
        Proxy.newProxyInstance(
            ConsumerGroupStore.class.getClassLoader(),
            new Class<?>[] {ConsumerGroupStore.class},
            (proxy, method, args) -> {
              if (method.getName().equals("concurrentClaims")) {
                return concurrent;
              }
              if (method.getName().equals("atomically")) {
                beforeSection.run();
              }
              try {
                return method.invoke(groups, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
