package io.flywheel.fleet.client;

import io.grpc.Status;

/** How the client words a failed call: TLS failures apart from a gateway out of reach, without Netty internals. */
final class TransportErrors {
    private TransportErrors() {}

    /**
     * @return a sentence for a call that failed in the TLS handshake (a certificate the robot does not trust, a robot
     *     certificate the gateway does not accept, TLS on one side only), or null when it did not: such a failure is
     *     the same on every retry, so it is not retried
     */
    static String tlsProblem(Status s) {
        if (s.getCode() != Status.Code.UNAVAILABLE) {
            return null;
        }
        String desc = s.getDescription() == null ? "" : s.getDescription();
        boolean tls = desc.startsWith("ssl exception") || desc.contains("SslHandler");
        Throwable root = s.getCause();
        for (Throwable t = s.getCause(); t != null; t = t.getCause()) {
            String n = t.getClass().getName();
            tls |= n.contains("SSL") || n.contains("Ssl");
            root = t;
        }
        if (!tls) {
            return null;
        }
        String why = root == null ? desc : root.getMessage() == null ? root.getClass().getSimpleName()
                : root.getMessage();
        return "the TLS handshake with the gateway failed (" + why + "): check that the gateway serves TLS"
                + " (--tls-cert), that --tls-ca is the CA that signed its certificate, and, for a gateway with"
                + " --tls-client-ca, this robot's --tls-cert and --tls-key";
    }

    /** @return {@code CODE: description}, without the channel pipeline gRPC appends to transport errors */
    static String describe(Status s) {
        String d = s.getDescription();
        if (d != null) {
            int p = d.indexOf("\nChannel Pipeline:");
            d = p < 0 ? d : d.substring(0, p);
        }
        return s.getCode() + (d == null || d.isEmpty() ? "" : ": " + d);
    }
}
