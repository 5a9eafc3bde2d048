/**
 * Per-robot bearer tokens: {@link io.flywheel.fleet.auth.RobotTokens} issues, lists and revokes them in the lake
 * property {@value io.flywheel.fleet.auth.RobotTokens#PROPERTY} (salted SHA-256 hashes, never the tokens), committed
 * through a lake transaction; {@link io.flywheel.fleet.auth.TokenInterceptor} checks the {@code authorization:
 * Bearer <token>} header of every gateway call.
 */
package io.flywheel.fleet.auth;
