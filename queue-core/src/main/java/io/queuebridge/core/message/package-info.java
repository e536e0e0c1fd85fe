/**
 * Messages as the core exchanges them: what a publisher hands in ({@link
 * io.queuebridge.core.message.PublishRequest}), what a reader gets back ({@link
 * io.queuebridge.core.message.Message} with its {@link io.queuebridge.core.message.Header}s, {@link
 * io.queuebridge.core.message.TimestampType} and {@link io.queuebridge.core.message.MessageState}),
 * the Kafka coordinates a bridged record keeps ({@link
 * io.queuebridge.core.message.KafkaCoordinates}) and the reserved property names ({@link
 * io.queuebridge.core.message.MessageProperties}).
 *
 * <p>Values only: immutable, no dependency on the rest of the core, so every other package (the
 * store SPI included) can use them.
 */
package io.queuebridge.core.message;
