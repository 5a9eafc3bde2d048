package io.flywheel.enrich.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The converter's inputs: minified JavaScript literals, tarball integrity, layer support. */
class ConverterInputsTest {
    @TempDir
    Path tmp;

    @Test
    void parsesMinifiedLiterals() throws ModelFormatException {
        Object v = JsLiteral.parseAfter("x;a.exports={a:!0,b:!1,c:.5,d:-0,e:[1,2e-3,null],'f g':\"h\\\"i\\u0041\",g:void 0}},{}",
                "exports={", "t.js");
        Map<?, ?> m = (Map<?, ?>) v;
        assertEquals(Boolean.TRUE, m.get("a"));
        assertEquals(Boolean.FALSE, m.get("b"));
        assertEquals(0.5, m.get("c"));
        assertEquals(-0.0, m.get("d"));
        assertEquals(List.of(1.0, 0.002), ((List<?>) m.get("e")).subList(0, 2));
        assertEquals("h\"iA", m.get("f g"));
        assertTrue(m.containsKey("g") && m.get("g") == null);
        ModelFormatException e = assertThrows(ModelFormatException.class,
                () -> JsLiteral.parseAfter("q={a:1,,}", "q={", "bad.js"));
        assertEquals("bad.js at character 7: expected a key, found ',}'", e.getMessage());
    }

    @Test
    void halfFloatsAndLayouts() {
        assertEquals(1.0f, NsfwjsConverter.halfToFloat((short) 0x3C00));
        assertEquals(-2.0f, NsfwjsConverter.halfToFloat((short) 0xC000));
        assertEquals(0x1p-24f, NsfwjsConverter.halfToFloat((short) 0x0001));
        // Keras [kh=1,kw=2,in=2,out=3] -> ONNX [out,in,kh,kw]: element (i,j,ci,co) = 1000*i + 100*j + 10*ci + co.
        float[] keras = new float[12];
        for (int j = 0; j < 2; j++) {
            for (int ci = 0; ci < 2; ci++) {
                for (int co = 0; co < 3; co++) {
                    keras[(j * 2 + ci) * 3 + co] = 100 * j + 10 * ci + co;
                }
            }
        }
        float[] onnx = NsfwjsConverter.convToOnnx(keras, 1, 2, 2, 3);
        assertArrayEquals(new float[] {0, 100, 10, 110, 1, 101, 11, 111, 2, 102, 12, 112}, onnx);
        // TensorFlow 'same' padding: 299 -> 150 with k=3, s=2 needs 2 pixels, one before and one after;
        // 224 -> 112 needs 1, after only.
        assertArrayEquals(new int[] {1, 1}, NsfwjsConverter.pads(299, 3, 2, 1, true));
        assertArrayEquals(new int[] {0, 1}, NsfwjsConverter.pads(224, 3, 2, 1, true));
        assertArrayEquals(new int[] {1, 1}, NsfwjsConverter.pads(35, 3, 1, 1, true));
    }

    @Test
    void tarballWithWrongDigestIsRejected() throws IOException {
        Path tgz = tmp.resolve("nsfwjs-4.4.0.tgz");
        Files.write(tgz, new byte[] {0x1f, (byte) 0x8b, 8, 0});
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> NsfwjsPackage.fromTarball(tgz));
        assertEquals(tgz + ": not the nsfwjs 4.4.0 tarball: expected integrity " + NsfwjsPackage.INTEGRITY + ", got "
                + NsfwjsPackage.integrity(new byte[] {0x1f, (byte) 0x8b, 8, 0}), e.getMessage());
    }

    @Test
    void unsupportedLayerBeforeTheCutIsNamed() throws IOException {
        Path pkg = tmp.resolve("nsfwjs");
        Files.createDirectories(pkg.resolve("dist/models/tiny"));
        Files.writeString(pkg.resolve("package.json"), "{\"name\":\"nsfwjs\",\"version\":\"4.4.0\"}");
        Files.writeString(pkg.resolve("dist/models/tiny/model.min.js"), "!function(){a.exports={modelTopology:{model_config:"
                + "{class_name:\"Model\",config:{layers:[{name:\"input_1\",class_name:\"InputLayer\",config:{batch_input_shape:"
                + "[null,8,8,3]},inbound_nodes:[]},{name:\"up\",class_name:\"UpSampling2D\",config:{size:[2,2]},"
                + "inbound_nodes:[[[\"input_1\",0,0,{}]]]}]}}},weightsManifest:[{paths:[\"group1-shard1of1\"],weights:[]}]}}");
        Files.writeString(pkg.resolve("dist/models/tiny/group1-shard1of1.min.js"), "h.exports=\"\"");
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> NsfwjsConverter.convert(
                NsfwjsPackage.fromDirectory(pkg), "tiny", "up", "tiny", Map.of()));
        assertTrue(e.getMessage().startsWith(pkg + "/dist/models/tiny/model.min.js: layer up (UpSampling2D): layer type"
                + " UpSampling2D is not supported before the cut"), e.getMessage());
        ModelFormatException cut = assertThrows(ModelFormatException.class, () -> NsfwjsConverter.convert(
                NsfwjsPackage.fromDirectory(pkg), "tiny", "mixed9", "tiny", Map.of()));
        assertEquals(pkg + "/dist/models/tiny/model.min.js: no layer named mixed9 to cut at", cut.getMessage());
    }
}
