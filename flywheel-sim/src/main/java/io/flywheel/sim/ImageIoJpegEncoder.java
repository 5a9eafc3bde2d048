package io.flywheel.sim;

import java.awt.image.BufferedImage;
import java.awt.image.DataBufferByte;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.stream.MemoryCacheImageOutputStream;

/** JPEG through javax.imageio (pure Java); the image cache on disk is turned off. */
final class ImageIoJpegEncoder implements JpegEncoder {
    private final ImageWriter writer;
    private final ImageWriteParam param;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 16);
    private BufferedImage image;

    ImageIoJpegEncoder(int quality) {
        ImageIO.setUseCache(false);
        writer = ImageIO.getImageWritersByFormatName("jpeg").next();
        param = writer.getDefaultWriteParam();
        param.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
        param.setCompressionQuality(quality / 100f);
    }

    @Override
    public byte[] encode(byte[] bgr, int width, int height) {
        if (image == null || image.getWidth() != width || image.getHeight() != height) {
            image = new BufferedImage(width, height, BufferedImage.TYPE_3BYTE_BGR);
        }
        byte[] dst = ((DataBufferByte) image.getRaster().getDataBuffer()).getData();
        System.arraycopy(bgr, 0, dst, 0, width * height * 3);
        bytes.reset();
        try (MemoryCacheImageOutputStream ios = new MemoryCacheImageOutputStream(bytes)) {
            writer.setOutput(ios);
            writer.write(null, new IIOImage(image, null, null), param);
        } catch (IOException e) {
            throw new UncheckedIOException("ImageIO JPEG encoding failed", e);
        }
        return bytes.toByteArray();
    }

    @Override
    public String name() {
        return "imageio";
    }

    @Override
    public void close() {
        writer.dispose();
    }
}
