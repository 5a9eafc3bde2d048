/**
 * Typed errors with one root, {@link io.flywheel.error.FlywheelException}: bad input, not found, conflict and storage
 * unavailable. Modules throw the subclass that says what happened; the command line maps them to exit code 1.
 */
package io.flywheel.error;
