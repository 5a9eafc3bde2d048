package io.flywheel.testkit;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;

/**
 * A real S3-compatible server for tests: s3proxy on loopback, over a jclouds filesystem blob store in a folder,
 * checking AWS V2 or V4 signatures with {@link #KEY} and {@link #SECRET}. The server can be stopped and started
 * again on the same port ({@link #stopServer}, {@link #restart}) to play a store that dies and comes back; the blobs
 * stay in the folder.
 */
public final class S3TestServer implements AutoCloseable {
    public static final String KEY = "flywheel-test-key";
    public static final String SECRET = "flywheel-test-secret";
    public static final String REGION = "us-east-1";

    private final BlobStoreContext context;
    private S3Proxy proxy;
    private int port;

    private S3TestServer(Path blobs) throws Exception {
        Properties props = new Properties();
        props.setProperty("jclouds.filesystem.basedir", Files.createDirectories(blobs).toString());
        context = ContextBuilder.newBuilder("filesystem").credentials("unused", "unused").overrides(props)
                .build(BlobStoreContext.class);
    }

    /**
     * Starts a server on a free port.
     *
     * @param blobs the folder that holds the buckets (created when missing)
     * @param buckets buckets to create
     */
    public static S3TestServer start(Path blobs, String... buckets) throws Exception {
        S3TestServer s = new S3TestServer(blobs);
        try {
            for (String b : buckets) {
                s.blobStore().createContainerInLocation(null, b);
            }
            s.listen(0);
            return s;
        } catch (Exception e) {
            s.close();
            throw e;
        }
    }

    private void listen(int onPort) throws Exception {
        proxy = S3Proxy.builder().blobStore(context.getBlobStore()).endpoint(URI.create("http://127.0.0.1:" + onPort))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, KEY, SECRET).build();
        proxy.start();
        while (!"STARTED".equals(proxy.getState())) {
            Thread.sleep(10);
        }
        port = proxy.getPort();
    }

    /** Stops answering requests (a store that died); the blobs stay. */
    public void stopServer() throws Exception {
        if (proxy != null) {
            proxy.stop();
            proxy = null;
        }
    }

    /** Starts answering again on the port it had. */
    public void restart() throws Exception {
        stopServer();
        listen(port);
    }

    public int port() {
        return port;
    }

    /** @return {@code http://127.0.0.1:PORT} */
    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    /** @return the AWS environment variables a process needs to reach this server */
    public Map<String, String> environment() {
        return Map.of("AWS_ENDPOINT_URL", endpoint(), "AWS_ACCESS_KEY_ID", KEY, "AWS_SECRET_ACCESS_KEY", SECRET,
                "AWS_REGION", REGION);
    }

    /** The blob store behind the server, to look at or seed objects without going through S3. */
    public BlobStore blobStore() {
        return context.getBlobStore();
    }

    @Override
    public void close() throws Exception {
        try {
            stopServer();
        } finally {
            context.close();
        }
    }
}
