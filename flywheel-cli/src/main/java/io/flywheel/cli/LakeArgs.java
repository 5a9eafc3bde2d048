package io.flywheel.cli;

import io.flywheel.lake.Lake;
import io.flywheel.lake.StorageConfig;

/** Storage options shared by the commands that open a lake. */
final class LakeArgs {
    private LakeArgs() {}

    static Lake.Options options(String endpoint, String region, boolean allowHttp) {
        if (endpoint == null && region == null && !allowHttp) {
            return Lake.Options.defaults();
        }
        StorageConfig.Builder b = StorageConfig.builder();
        if (endpoint != null) {
            b.endpoint(endpoint);
        }
        if (region != null) {
            b.region(region);
        }
        b.allowHttp(allowHttp);
        return Lake.Options.defaults().withStorage(b.build());
    }
}
