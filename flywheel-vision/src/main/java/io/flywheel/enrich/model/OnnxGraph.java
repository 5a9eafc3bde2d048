package io.flywheel.enrich.model;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;

/**
 * A small ONNX graph builder that writes {@code ModelProto} bytes directly with protobuf-java's
 * {@link CodedOutputStream}, using the field numbers of {@code onnx/onnx.proto} (ONNX IR version 7,
 * the one paired with opset 13). Only what the converter needs: float32 and int64 initializers
 * (raw little-endian data), nodes with int, ints and float attributes, and float32 graph inputs and
 * outputs whose dimensions are fixed or named (symbolic).
 *
 * <p>Not thread-safe; build once, then call {@link #toModelBytes}.
 */
final class OnnxGraph {
    /** ONNX IR version 7 (ONNX 1.8), the version that introduced opset 13. */
    static final long IR_VERSION = 7;

    // TensorProto.DataType
    static final int FLOAT = 1;
    static final int INT64 = 7;

    // AttributeProto.AttributeType
    private static final int ATTR_FLOAT = 1;
    private static final int ATTR_INT = 2;
    private static final int ATTR_INTS = 7;

    private record Attr(String name, int type, float f, long i, long[] ints) {}

    private record Node(String op, List<String> inputs, List<String> outputs, String name, List<Attr> attrs) {}

    private record Initializer(String name, int dataType, long[] dims, byte[] raw) {}

    /** A float32 tensor value: a dimension is a fixed size (&gt;= 0) or a name (symbolic). */
    private record Value(String name, Object[] dims) {}

    private final String name;
    private final List<Node> nodes = new ArrayList<>();
    private final Map<String, Initializer> initializers = new LinkedHashMap<>();
    private final List<Value> inputs = new ArrayList<>();
    private final List<Value> outputs = new ArrayList<>();

    OnnxGraph(String name) {
        this.name = name;
    }

    /** One node under construction; attributes are added before the next node starts. */
    final class NodeBuilder {
        private final List<Attr> attrs;

        private NodeBuilder(List<Attr> attrs) {
            this.attrs = attrs;
        }

        NodeBuilder attr(String attrName, long value) {
            attrs.add(new Attr(attrName, ATTR_INT, 0f, value, null));
            return this;
        }

        NodeBuilder attr(String attrName, float value) {
            attrs.add(new Attr(attrName, ATTR_FLOAT, value, 0, null));
            return this;
        }

        NodeBuilder attr(String attrName, long... values) {
            attrs.add(new Attr(attrName, ATTR_INTS, 0f, 0, values.clone()));
            return this;
        }
    }

    /**
     * Adds a node of the default ONNX domain.
     *
     * @param op       operator type, e.g. {@code Conv}
     * @param nodeName unique node name
     * @param ins      input value names (empty string for an omitted optional input)
     * @param out      the single output value name
     * @return a builder for the node's attributes
     */
    NodeBuilder node(String op, String nodeName, List<String> ins, String out) {
        List<Attr> attrs = new ArrayList<>();
        nodes.add(new Node(op, List.copyOf(ins), List.of(out), nodeName, attrs));
        return new NodeBuilder(attrs);
    }

    /** Adds a float32 initializer of the given shape (row-major data). */
    void floatInitializer(String tensorName, long[] dims, float[] data) {
        long count = 1;
        for (long d : dims) {
            count *= d;
        }
        if (count != data.length) {
            throw new IllegalArgumentException("initializer " + tensorName + ": " + data.length + " values for shape "
                    + java.util.Arrays.toString(dims));
        }
        ByteBuffer b = ByteBuffer.allocate(data.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(data);
        initializers.put(tensorName, new Initializer(tensorName, FLOAT, dims.clone(), b.array()));
    }

    /** Adds an int64 initializer of the given shape. */
    void int64Initializer(String tensorName, long[] dims, long[] data) {
        ByteBuffer b = ByteBuffer.allocate(data.length * 8).order(ByteOrder.LITTLE_ENDIAN);
        b.asLongBuffer().put(data);
        initializers.put(tensorName, new Initializer(tensorName, INT64, dims.clone(), b.array()));
    }

    /** Declares a float32 graph input; each dim is an Integer/Long size or a String name. */
    void input(String valueName, Object... dims) {
        inputs.add(new Value(valueName, dims.clone()));
    }

    /** Declares a float32 graph output; each dim is an Integer/Long size or a String name. */
    void output(String valueName, Object... dims) {
        outputs.add(new Value(valueName, dims.clone()));
    }

    /**
     * Serialises the graph as an ONNX {@code ModelProto}.
     *
     * @param opset      default-domain opset version, e.g. 13
     * @param producer   producer_name
     * @param version    producer_version
     * @param docString  model doc_string
     * @param metadata   metadata_props, key to value
     * @return the protobuf bytes of the model file
     */
    byte[] toModelBytes(long opset, String producer, String version, String docString, Map<String, String> metadata) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 20);
            CodedOutputStream out = CodedOutputStream.newInstance(bytes);
            out.writeInt64(1, IR_VERSION);                       // ir_version
            out.writeString(2, producer);                        // producer_name
            out.writeString(3, version);                         // producer_version
            out.writeString(6, docString);                       // doc_string
            out.writeBytes(7, graphBytes());                     // graph
            out.writeBytes(8, message(o -> {                     // opset_import
                o.writeString(1, "");
                o.writeInt64(2, opset);
            }));
            for (Map.Entry<String, String> e : metadata.entrySet()) { // metadata_props
                out.writeBytes(14, message(o -> {
                    o.writeString(1, e.getKey());
                    o.writeString(2, e.getValue());
                }));
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
    }

    private interface Writer {
        void write(CodedOutputStream out) throws IOException;
    }

    private static ByteString message(Writer w) throws IOException {
        ByteString.Output buf = ByteString.newOutput();
        CodedOutputStream o = CodedOutputStream.newInstance(buf);
        w.write(o);
        o.flush();
        return buf.toByteString();
    }

    private ByteString graphBytes() throws IOException {
        return message(g -> {
            for (Node n : nodes) {
                g.writeBytes(1, nodeBytes(n));                   // node
            }
            g.writeString(2, name);                              // name
            for (Initializer t : initializers.values()) {
                g.writeBytes(5, message(o -> {                   // initializer (TensorProto)
                    for (long d : t.dims()) {
                        o.writeInt64(1, d);                      // dims
                    }
                    o.writeInt32(2, t.dataType());               // data_type
                    o.writeString(8, t.name());                  // name
                    o.writeBytes(9, ByteString.copyFrom(t.raw())); // raw_data
                }));
            }
            for (Value v : inputs) {
                g.writeBytes(11, valueInfo(v));                  // input
            }
            for (Value v : outputs) {
                g.writeBytes(12, valueInfo(v));                  // output
            }
        });
    }

    private static ByteString nodeBytes(Node n) throws IOException {
        return message(o -> {
            for (String in : n.inputs()) {
                o.writeString(1, in);                            // input
            }
            for (String out : n.outputs()) {
                o.writeString(2, out);                           // output
            }
            o.writeString(3, n.name());                          // name
            o.writeString(4, n.op());                            // op_type
            for (Attr a : n.attrs()) {
                o.writeBytes(5, message(ao -> {                  // attribute
                    ao.writeString(1, a.name());                 // name
                    switch (a.type()) {
                        case ATTR_FLOAT -> ao.writeFloat(2, a.f()); // f
                        case ATTR_INT -> ao.writeInt64(3, a.i());   // i
                        default -> {
                            for (long v : a.ints()) {
                                ao.writeInt64(8, v);             // ints
                            }
                        }
                    }
                    ao.writeEnum(20, a.type());                  // type
                }));
            }
        });
    }

    private static ByteString valueInfo(Value v) throws IOException {
        return message(o -> {
            o.writeString(1, v.name());                          // name
            o.writeBytes(2, message(type ->                      // type (TypeProto)
                    type.writeBytes(1, message(tensor -> {       // tensor_type
                        tensor.writeInt32(1, FLOAT);             // elem_type
                        tensor.writeBytes(2, message(shape -> {  // shape
                            for (Object d : v.dims()) {
                                shape.writeBytes(1, message(dim -> {
                                    if (d instanceof Number num) {
                                        dim.writeInt64(1, num.longValue()); // dim_value
                                    } else {
                                        dim.writeString(2, d.toString());   // dim_param
                                    }
                                }));
                            }
                        }));
                    }))));
        });
    }
}
