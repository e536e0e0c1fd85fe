/**
 * Topic filters ({@code +} one level, {@code #} the rest, {@code /} separator): validation and
 * matching in {@link io.queuebridge.core.topic.TopicFilters}, and {@link
 * io.queuebridge.core.topic.TopicIndex}, the index from a topic to the filters (queues) it matches,
 * which stores use to answer "which queues match this topic". Public API.
 */
package io.queuebridge.core.topic;
