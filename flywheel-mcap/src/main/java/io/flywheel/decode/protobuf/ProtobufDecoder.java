package io.flywheel.decode.protobuf;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.google.protobuf.AnyProto;
import com.google.protobuf.ApiProto;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DurationProto;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.EmptyProto;
import com.google.protobuf.FieldMaskProto;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.SourceContextProto;
import com.google.protobuf.StructProto;
import com.google.protobuf.TimestampProto;
import com.google.protobuf.TypeProto;
import com.google.protobuf.WrappersProto;
import io.flywheel.decode.DecodeException;
import io.flywheel.decode.MessageDecoder;

/**
 * Decodes MCAP messages of message encoding {@code protobuf} (MCAP well-known encodings: schema
 * encoding {@code protobuf}, the schema data a serialized {@code google.protobuf.FileDescriptorSet},
 * the schema name the fully qualified message type) into the tree of {@link MessageDecoder}, via
 * protobuf-java's {@link DynamicMessage}.
 *
 * <p>Tree: a message is a {@code LinkedHashMap<String, Object>} with every field in declaration
 * order. A field without presence that is not set holds its default (0, "", false, empty bytes,
 * the first enum value, an empty list); a field with presence that is not set (a message field,
 * a {@code oneof} member, a proto3 {@code optional} or proto2 optional field) holds {@code null}.
 * Scalars: bool {@code Boolean}; int32, sint32, sfixed32 {@code Integer}; uint32, fixed32
 * {@code Long} (unsigned); int64, sint64, sfixed64 {@code Long}; uint64, fixed64 {@code Long} below
 * 2^63, else {@code BigInteger}; float {@code Float}; double {@code Double}; string {@code String};
 * bytes {@code byte[]}; enum: the value's name as a {@code String} (an open-enum number that the
 * schema does not name stays an {@code Integer}). Repeated fields are {@code List}s. Map fields are
 * a {@code List} of {@code {key, value}} maps in wire order (keys may be integers or booleans, so
 * they are not made into a Java map). Well-known types decode as the messages they are:
 * {@code google.protobuf.Timestamp} is {@code {seconds: Long, nanos: Integer}}. Unknown fields are
 * dropped.
 *
 * <p>Immutable and thread-safe once built.
 */
public final class ProtobufDecoder implements MessageDecoder {
    /** protobuf-java's own copies of the well-known type files, used when a set leaves them out. */
    private static final Map<String, Descriptors.FileDescriptor> WELL_KNOWN = wellKnown();

    private final Descriptors.Descriptor descriptor;

    private ProtobufDecoder(Descriptors.Descriptor descriptor) {
        this.descriptor = descriptor;
    }

    private static Map<String, Descriptors.FileDescriptor> wellKnown() {
        Map<String, Descriptors.FileDescriptor> m = new HashMap<>();
        for (Descriptors.FileDescriptor f : List.of(TimestampProto.getDescriptor(), DurationProto.getDescriptor(),
                AnyProto.getDescriptor(), StructProto.getDescriptor(), WrappersProto.getDescriptor(),
                EmptyProto.getDescriptor(), FieldMaskProto.getDescriptor(), ApiProto.getDescriptor(),
                TypeProto.getDescriptor(), SourceContextProto.getDescriptor(),
                DescriptorProtos.getDescriptor())) {
            m.put(f.getName(), f);
        }
        return Map.copyOf(m);
    }

    /**
     * Factory for the registry: message encoding {@code protobuf}, schema encoding {@code protobuf}.
     *
     * @param schemaName fully qualified message type, e.g. {@code foxglove.CompressedImage} (a
     *     leading dot is allowed)
     * @param schemaData a serialized {@code google.protobuf.FileDescriptorSet} holding the type's file
     *     and its dependencies, in any order; well-known files ({@code google/protobuf/*.proto})
     *     may be left out
     * @return the decoder
     * @throws DecodeException when the set does not parse, a dependency is missing or cyclic, the
     *     descriptors are invalid, or the type is not in the set
     */
    public static ProtobufDecoder forSchema(String schemaName, byte[] schemaData) throws DecodeException {
        DescriptorProtos.FileDescriptorSet set;
        try {
            set = DescriptorProtos.FileDescriptorSet.parseFrom(schemaData);
        } catch (InvalidProtocolBufferException e) {
            throw new DecodeException(schemaName + ": the schema data is not a serialized "
                    + "google.protobuf.FileDescriptorSet: " + e.getMessage(), e);
        }
        return forDescriptorSet(schemaName, set);
    }

    /**
     * @param typeName fully qualified message type
     * @param set the files
     * @return the decoder
     * @throws DecodeException as {@link #forSchema(String, byte[])}
     */
    public static ProtobufDecoder forDescriptorSet(String typeName, DescriptorProtos.FileDescriptorSet set)
            throws DecodeException {
        Map<String, DescriptorProtos.FileDescriptorProto> protos = new LinkedHashMap<>();
        for (DescriptorProtos.FileDescriptorProto f : set.getFileList()) {
            protos.putIfAbsent(f.getName(), f);
        }
        Map<String, Descriptors.FileDescriptor> built = new HashMap<>();
        String name = typeName.startsWith(".") ? typeName.substring(1) : typeName;
        for (String file : protos.keySet()) {
            Descriptors.FileDescriptor fd = build(file, protos, built, new HashSet<>(), typeName);
            Descriptors.Descriptor d = find(fd, name);
            if (d != null) {
                return new ProtobufDecoder(d);
            }
        }
        throw new DecodeException(typeName + ": no message type of that name in the FileDescriptorSet (files: "
                + protos.keySet() + ")");
    }

    /** @param descriptor the message type */
    public static ProtobufDecoder forDescriptor(Descriptors.Descriptor descriptor) {
        return new ProtobufDecoder(descriptor);
    }

    /** @return the message type */
    public Descriptors.Descriptor descriptor() {
        return descriptor;
    }

    private static Descriptors.FileDescriptor build(String file,
            Map<String, DescriptorProtos.FileDescriptorProto> protos, Map<String, Descriptors.FileDescriptor> built,
            Set<String> active, String typeName) throws DecodeException {
        Descriptors.FileDescriptor done = built.get(file);
        if (done != null) {
            return done;
        }
        DescriptorProtos.FileDescriptorProto proto = protos.get(file);
        if (proto == null) {
            Descriptors.FileDescriptor wk = WELL_KNOWN.get(file);
            if (wk != null) {
                return wk;
            }
            throw new DecodeException(typeName + ": the FileDescriptorSet lacks the file " + file
                    + " that another file imports");
        }
        if (!active.add(file)) {
            throw new DecodeException(typeName + ": the FileDescriptorSet's imports form a cycle through " + file);
        }
        List<Descriptors.FileDescriptor> deps = new ArrayList<>();
        for (String dep : proto.getDependencyList()) {
            deps.add(build(dep, protos, built, active, typeName));
        }
        active.remove(file);
        try {
            Descriptors.FileDescriptor fd = Descriptors.FileDescriptor.buildFrom(proto,
                    deps.toArray(new Descriptors.FileDescriptor[0]));
            built.put(file, fd);
            return fd;
        } catch (Descriptors.DescriptorValidationException e) {
            throw new DecodeException(typeName + ": invalid descriptor in " + file + ": " + e.getMessage(), e);
        }
    }

    private static Descriptors.Descriptor find(Descriptors.FileDescriptor fd, String fullName) {
        String pkg = fd.getPackage();
        String rest;
        if (pkg.isEmpty()) {
            rest = fullName;
        } else if (fullName.startsWith(pkg + ".")) {
            rest = fullName.substring(pkg.length() + 1);
        } else {
            return null;
        }
        String[] parts = rest.split("\\.");
        Descriptors.Descriptor d = fd.findMessageTypeByName(parts[0]);
        for (int i = 1; i < parts.length && d != null; i++) {
            d = d.findNestedTypeByName(parts[i]);
        }
        return d;
    }

    /**
     * @param data one serialized message, from position to limit; the position is not changed
     * @return a {@code LinkedHashMap<String, Object>} in field declaration order
     * @throws DecodeException when the bytes are not a valid encoding of the type (names the byte
     *     offset where the parser stopped)
     */
    @Override
    public Object decode(ByteBuffer data) throws DecodeException {
        CodedInputStream in = CodedInputStream.newInstance(data.slice());
        try {
            DynamicMessage m = DynamicMessage.parseFrom(descriptor, in);
            return toTree(m);
        } catch (InvalidProtocolBufferException e) {
            throw new DecodeException(descriptor.getFullName() + " protobuf message at byte " + in.getTotalBytesRead()
                    + " of " + data.remaining() + ": " + e.getMessage(), e);
        } catch (java.io.IOException e) {
            throw new DecodeException(descriptor.getFullName() + " protobuf message: " + e.getMessage(), e);
        }
    }

    private static Map<String, Object> toTree(DynamicMessage m) {
        Descriptors.Descriptor d = m.getDescriptorForType();
        Map<String, Object> out = new LinkedHashMap<>();
        for (Descriptors.FieldDescriptor f : d.getFields()) {
            if (f.isRepeated()) {
                int n = m.getRepeatedFieldCount(f);
                List<Object> list = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    list.add(value(f, m.getRepeatedField(f, i)));
                }
                out.put(f.getName(), list);
            } else if (f.hasPresence() && !m.hasField(f)) {
                out.put(f.getName(), null);
            } else {
                out.put(f.getName(), value(f, m.getField(f)));
            }
        }
        return out;
    }

    private static Object value(Descriptors.FieldDescriptor f, Object v) {
        return switch (f.getType()) {
            case UINT32, FIXED32 -> Integer.toUnsignedLong((Integer) v);
            case UINT64, FIXED64 -> {
                long x = (Long) v;
                yield x >= 0 ? (Object) x : new BigInteger(Long.toUnsignedString(x));
            }
            case BYTES -> ((ByteString) v).toByteArray();
            case ENUM -> {
                Descriptors.EnumValueDescriptor e = (Descriptors.EnumValueDescriptor) v;
                // an unknown number of an open enum gets a placeholder descriptor whose index is -1
                yield e.getIndex() < 0 ? (Object) e.getNumber() : e.getName();
            }
            case MESSAGE, GROUP -> toTree((DynamicMessage) v);
            default -> v; // Integer, Long, Float, Double, Boolean, String as protobuf-java gives them
        };
    }
}
