package io.queuebridge.cli;

/**
 * A command that another module adds to {@code queue-bridge}, found with {@link
 * java.util.ServiceLoader} on the class path (a {@code
 * META-INF/services/io.queuebridge.cli.CliExtension} file naming the class). The web console's
 * {@code serve} is one: it lives in its own module so that the command line itself needs no web
 * server.
 */
public interface CliExtension {
  /**
   * A new instance of the picocli command to add (a class annotated with {@code @Command}); its
   * name is the subcommand's name.
   */
  Object command();
}
