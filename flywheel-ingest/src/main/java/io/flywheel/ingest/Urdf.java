package io.flywheel.ingest;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;
import org.xml.sax.SAXParseException;

/**
 * The joints of a robot's URDF (ROS "Unified Robot Description Format", {@code <robot>} root, one {@code <joint>}
 * child per joint: http://wiki.ros.org/urdf/XML/joint), as far as choosing and reading a gripper joint needs them.
 *
 * <p>Parsed with the JDK's DOM parser, securely: no DOCTYPE, no external entities or schemas, secure processing on.
 *
 * @param source where the URDF came from, e.g. {@code attachment robot.urdf} or {@code metadata robot_description}
 * @param robot the {@code name} attribute of {@code <robot>}, "" when absent
 * @param joints the joints, in file order
 */
public record Urdf(String source, String robot, List<Joint> joints) {
    public Urdf {
        joints = List.copyOf(joints);
    }

    /**
     * One {@code <joint>}.
     *
     * @param name the joint's name
     * @param type {@code revolute}, {@code continuous}, {@code prismatic}, {@code fixed}, {@code floating} or
     *     {@code planar}, lower case
     * @param parent the parent link, "" when absent
     * @param child the child link, "" when absent
     * @param lower {@code <limit lower>} in the joint's unit ({@link #unit()}), NaN when absent
     * @param upper {@code <limit upper>} in the joint's unit, NaN when absent
     * @param mimic the joint this one mimics ({@code <mimic joint>}), "" when none
     */
    public record Joint(String name, String type, String parent, String child, double lower, double upper,
                        String mimic) {
        /** @return {@code rad} for revolute and continuous joints, {@code m} for prismatic ones, "" otherwise */
        public String unit() {
            return unitOf(type);
        }

        /** @return true when the joint's name or child link contains {@code finger} or {@code gripper} (any case) */
        public boolean namesGripper() {
            return GripperJoint.looksLikeGripper(name) || GripperJoint.looksLikeGripper(child);
        }
    }

    /**
     * @param type a URDF joint type
     * @return {@code rad} for {@code revolute} / {@code continuous}, {@code m} for {@code prismatic}, "" otherwise
     */
    public static String unitOf(String type) {
        return switch (type) {
            case "revolute", "continuous" -> "rad";
            case "prismatic" -> "m";
            default -> "";
        };
    }

    /** @return the joint of that name, if the URDF has one */
    public Optional<Joint> joint(String name) {
        return joints.stream().filter(j -> j.name().equals(name)).findFirst();
    }

    /**
     * The gripper joints the URDF declares: movable (non-fixed) joints whose name or child link says finger or
     * gripper, and the prismatic joints of a {@code <mimic>} pair (a joint mimicking a prismatic joint, and the one it
     * mimics), prismatic joints first (a finger opening in metres), then file order.
     *
     * @return joint names; empty when the URDF declares none
     */
    public List<String> gripperJoints() {
        List<String> prismatic = new ArrayList<>();
        List<String> other = new ArrayList<>();
        for (Joint j : joints) {
            if (j.unit().isEmpty()) {
                continue; // fixed, floating, planar: no single position to read
            }
            boolean mimicPair = j.type().equals("prismatic") && joints.stream().anyMatch(o ->
                    o.type().equals("prismatic") && (o.mimic().equals(j.name()) || j.mimic().equals(o.name())));
            if (j.namesGripper() || mimicPair) {
                (j.type().equals("prismatic") ? prismatic : other).add(j.name());
            }
        }
        prismatic.addAll(other);
        return prismatic;
    }

    /**
     * @param text the bytes of the file or attachment
     * @return true when they parse as XML with a {@code <robot>} root (what decides an {@code application/xml}
     *     attachment is a URDF)
     */
    public static boolean hasRobotRoot(byte[] text) {
        try {
            return document(text).getDocumentElement().getTagName().equals("robot");
        } catch (IOException | SAXException | ParserConfigurationException e) {
            return false;
        }
    }

    /**
     * Parses a URDF.
     *
     * @param text the URDF's bytes (UTF-8 unless its XML declaration says otherwise)
     * @param source where it came from, named in errors
     * @return the URDF's joints
     * @throws IngestException when it is not well-formed XML (line and column named), its root is not
     *     {@code <robot>}, a joint has no name or type, or a limit is not a number
     */
    public static Urdf parse(byte[] text, String source) throws IngestException {
        Document d;
        try {
            d = document(text);
        } catch (SAXParseException e) {
            throw new IngestException(source, -1, "not a well-formed URDF: line " + e.getLineNumber() + ", column "
                    + e.getColumnNumber() + ": " + e.getMessage());
        } catch (IOException | SAXException | ParserConfigurationException e) {
            throw new IngestException(source, -1, "not a well-formed URDF: " + e.getMessage());
        }
        Element root = d.getDocumentElement();
        if (!root.getTagName().equals("robot")) {
            throw new IngestException(source, -1, "not a URDF: the root element is <" + root.getTagName()
                    + ">, expected <robot>");
        }
        List<Joint> joints = new ArrayList<>();
        NodeList kids = root.getChildNodes();
        for (int i = 0; i < kids.getLength(); i++) {
            Node n = kids.item(i);
            if (!(n instanceof Element e) || !e.getTagName().equals("joint")) {
                continue;
            }
            String name = e.getAttribute("name");
            String type = e.getAttribute("type").toLowerCase(Locale.ROOT);
            if (name.isEmpty() || type.isEmpty()) {
                throw new IngestException(source, -1, "joint " + (joints.size() + 1) + (name.isEmpty() ? "" : " \""
                        + name + "\"") + ": a <joint> needs both a name and a type attribute");
            }
            Element limit = child(e, "limit");
            double lower = number(limit, "lower", source, name);
            double upper = number(limit, "upper", source, name);
            Element mimic = child(e, "mimic");
            joints.add(new Joint(name, type, attr(child(e, "parent"), "link"), attr(child(e, "child"), "link"),
                    lower, upper, attr(mimic, "joint")));
        }
        return new Urdf(source, root.getAttribute("name"), joints);
    }

    private static Document document(byte[] text) throws IOException, SAXException, ParserConfigurationException {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        f.setFeature("http://xml.org/sax/features/external-general-entities", false);
        f.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
        f.setAttribute(XMLConstants.ACCESS_EXTERNAL_DTD, "");
        f.setAttribute(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
        f.setXIncludeAware(false);
        f.setExpandEntityReferences(false);
        DocumentBuilder b = f.newDocumentBuilder();
        b.setErrorHandler(new org.xml.sax.ErrorHandler() { // thrown, not printed to stderr
            @Override
            public void warning(SAXParseException e) { }

            @Override
            public void error(SAXParseException e) throws SAXParseException { throw e; }

            @Override
            public void fatalError(SAXParseException e) throws SAXParseException { throw e; }
        });
        return b.parse(new ByteArrayInputStream(text));
    }

    private static Element child(Element e, String tag) {
        NodeList kids = e.getChildNodes();
        for (int i = 0; i < kids.getLength(); i++) {
            if (kids.item(i) instanceof Element c && c.getTagName().equals(tag)) {
                return c;
            }
        }
        return null;
    }

    private static String attr(Element e, String name) {
        return e == null ? "" : e.getAttribute(name);
    }

    private static double number(Element limit, String name, String source, String joint) throws IngestException {
        String v = attr(limit, name).strip();
        if (v.isEmpty()) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IngestException(source, -1, "joint \"" + joint + "\": <limit " + name + "=\"" + v
                    + "\"> is not a number");
        }
    }

    /** @return the text as UTF-8 bytes (a URDF held in a metadata value or a String message) */
    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
