package io.flywheel.fleet.auth;

import java.util.Optional;
import java.util.function.Supplier;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * Checks every gateway call's {@code authorization: Bearer <token>} header against the lake's {@link RobotTokens}
 * and puts the token's robot id in the call's context ({@link #ROBOT}); a call without a valid token is closed with
 * UNAUTHENTICATED before it reaches a service. The registry is read again from the lake every
 * {@code refreshNs} (so a revoked token stops working within that time) and, at most once a second, when an unknown
 * token arrives (so a token added while the gateway runs works at once).
 */
public final class TokenInterceptor implements ServerInterceptor {
    /** The authenticated robot id of the current call. */
    public static final Context.Key<String> ROBOT = Context.key("flywheel.robot");
    /** The metadata key of the bearer token. */
    public static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private static final long MISS_REFRESH_NS = 1_000_000_000L;

    private final Supplier<RobotTokens> load;
    private final long refreshNs;
    private volatile RobotTokens tokens;
    private volatile long loadedAt;

    /**
     * @param load reads the registry from the lake (called again on refresh)
     * @param refreshNs how often the registry is read again, ns
     */
    public TokenInterceptor(Supplier<RobotTokens> load, long refreshNs) {
        this.load = load;
        this.refreshNs = refreshNs;
        this.tokens = load.get();
        this.loadedAt = System.nanoTime();
    }

    /**
     * @param token a bearer token
     * @return its robot, or empty when the token is unknown or revoked
     */
    public Optional<String> robotOf(String token) {
        long now = System.nanoTime();
        if (now - loadedAt > refreshNs) {
            reload(now);
        }
        Optional<String> robot = tokens.verify(token);
        if (robot.isEmpty() && now - loadedAt > MISS_REFRESH_NS) {
            reload(now);
            robot = tokens.verify(token);
        }
        return robot;
    }

    private synchronized void reload(long now) {
        if (now - loadedAt > Math.min(refreshNs, MISS_REFRESH_NS)) {
            tokens = load.get();
            loadedAt = System.nanoTime();
        }
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
            ServerCallHandler<Q, A> next) {
        String h = headers.get(AUTHORIZATION);
        String why;
        if (h == null) {
            why = "no authorization header: send 'authorization: Bearer <token>' (flywheel gateway token add ROBOT LAKE)";
        } else if (!h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            why = "the authorization header is not 'Bearer <token>'";
        } else {
            Optional<String> robot;
            try {
                robot = robotOf(h.substring(7).trim());
            } catch (RuntimeException e) {
                call.close(Status.UNAVAILABLE.withDescription("cannot read the lake's tokens: " + e.getMessage()),
                        new Metadata());
                return new ServerCall.Listener<>() { };
            }
            if (robot.isPresent()) {
                return Contexts.interceptCall(Context.current().withValue(ROBOT, robot.get()), call, headers, next);
            }
            why = "unknown or revoked token";
        }
        call.close(Status.UNAUTHENTICATED.withDescription(why), new Metadata());
        return new ServerCall.Listener<>() { };
    }
}
