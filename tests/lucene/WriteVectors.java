// Writes interop test vectors for Lucene's DataOutput/DataInput encodings,
// using Apache Lucene's own org.apache.lucene.store classes.
//
// Usage: java -cp <lucene-core.jar>:<classdir> WriteVectors SEED OUT.bin OUT.txt
//
// OUT.bin holds ONLY the encoded values, back to back (no codec header or
// footer): it is the file Lucene's FSDirectory writes through an IndexOutput.
// The same sequence is also written to a ByteBuffersDataOutput and the two
// byte arrays must be identical.
//
// OUT.txt lists the values in order, one per line, `KIND VALUE`:
//   vint    unsigned u32 decimal (negative ints are the u32 reinterpretation)
//   vlong   unsigned decimal (always non-negative; Lucene requires it)
//   zint    signed decimal
//   zlong   signed decimal
//   int     signed decimal (Lucene 8: 4 bytes big-endian)
//   long    signed decimal (Lucene 8: 8 bytes big-endian)
//   short   signed decimal (Lucene 8: 2 bytes big-endian)
//   byte    unsigned decimal 0..255
//   string  UTF-8 bytes in lowercase hex; the empty string is a lone `-`
// preceded by one comment line:
//   # lucene-vectors seed=SEED lucene=VERSION count=N
//
// Randomness comes from java.util.Random, whose algorithm is fixed by the
// Java spec, so a given SEED gives the same output on any JVM.

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.apache.lucene.store.ByteBuffersDataOutput;
import org.apache.lucene.store.DataOutput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.Version;

public final class WriteVectors {

  static final int TOTAL = 2000;

  enum Kind {
    VINT, VLONG, ZINT, ZLONG, INT, LONG, SHORT, BYTE, STRING;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  static final class Value {
    final Kind kind;
    final long num; // numeric kinds
    final String str; // STRING only

    Value(Kind kind, long num) {
      this.kind = kind;
      this.num = num;
      this.str = null;
    }

    Value(String s) {
      this.kind = Kind.STRING;
      this.num = 0;
      this.str = s;
    }

    void writeTo(DataOutput out) throws IOException {
      switch (kind) {
        case VINT: out.writeVInt((int) num); break;
        case VLONG: out.writeVLong(num); break;
        case ZINT: out.writeZInt((int) num); break;
        case ZLONG: out.writeZLong(num); break;
        case INT: out.writeInt((int) num); break;
        case LONG: out.writeLong(num); break;
        case SHORT: out.writeShort((short) num); break;
        case BYTE: out.writeByte((byte) num); break;
        case STRING: out.writeString(str); break;
        default: throw new AssertionError(kind);
      }
    }

    String listing() {
      switch (kind) {
        case VINT: return Integer.toUnsignedString((int) num);
        case VLONG: return Long.toUnsignedString(num);
        case ZINT: return Integer.toString((int) num);
        case ZLONG: return Long.toString(num);
        case INT: return Integer.toString((int) num);
        case LONG: return Long.toString(num);
        case SHORT: return Short.toString((short) num);
        case BYTE: return Integer.toString(((int) num) & 0xFF);
        case STRING: {
          byte[] b = str.getBytes(StandardCharsets.UTF_8);
          // Cross-check Java's encoder against Lucene's own UTF-8 conversion.
          BytesRef ref = new BytesRef(str);
          byte[] lb = Arrays.copyOfRange(ref.bytes, ref.offset, ref.offset + ref.length);
          if (!Arrays.equals(b, lb)) {
            throw new IllegalStateException("UTF-8 mismatch between Java and Lucene for string #" + str.length());
          }
          if (b.length == 0) {
            return "-";
          }
          StringBuilder sb = new StringBuilder(b.length * 2);
          for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
          }
          return sb.toString();
        }
        default: throw new AssertionError(kind);
      }
    }
  }

  // ---------------------------------------------------------------------
  // Boundary values (always included once each, and favoured when filling)

  /** 2^k-1, 2^k, 2^k+1 for k = 0, 7, 14, ... (< width) and their negations, plus 0, ±1, min, max. */
  static long[] signedBoundaries(int width, long min, long max) {
    Set<Long> s = new LinkedHashSet<>();
    s.add(0L); s.add(1L); s.add(-1L); s.add(min); s.add(max); s.add(min + 1); s.add(max - 1);
    for (int k = 0; k < width; k += 7) {
      for (long d = -1; d <= 1; d++) {
        long v = (1L << k) + d;
        if (v >= min && v <= max) s.add(v);
        if (-v >= min && -v <= max) s.add(-v);
      }
    }
    return toArray(s);
  }

  /** VInt: 7-bit boundaries of the u32 value, plus the sign bit region (5-byte negatives). */
  static long[] vintBoundaries() {
    Set<Long> s = new LinkedHashSet<>();
    for (int k = 0; k <= 28; k += 7) {
      for (long d = -1; d <= 1; d++) {
        long v = (1L << k) + d;
        if (v >= 0) s.add((long) (int) v);
      }
    }
    long[] extra = {
      Integer.MAX_VALUE, Integer.MAX_VALUE - 1, Integer.MIN_VALUE, Integer.MIN_VALUE + 1,
      -1, -2, -128, -129, 0xFFFFFF80L, 0xF0000000L, 0x0FFFFFFFL, 0x10000000L, 0xFFFFFFFEL
    };
    for (long v : extra) s.add((long) (int) v);
    return toArray(s);
  }

  /** VLong: 7-bit boundaries up to 2^63-1 (Lucene rejects negative vlongs). */
  static long[] vlongBoundaries() {
    Set<Long> s = new LinkedHashSet<>();
    for (int k = 0; k <= 63; k += 7) {
      for (long d = -1; d <= 1; d++) {
        long v = (k == 63 ? Long.MIN_VALUE : (1L << k)) + d;
        if (v >= 0) s.add(v);
      }
    }
    s.add(Long.MAX_VALUE);
    s.add(Long.MAX_VALUE - 1);
    return toArray(s);
  }

  /** ZInt/ZLong: values whose zig-zag encoding lands on 2^k-1, 2^k, 2^k+1 (k multiple of 7), plus min/max. */
  static long[] zigzagBoundaries(int width) {
    Set<Long> s = new LinkedHashSet<>();
    long[] signed = width == 32
        ? signedBoundaries(32, Integer.MIN_VALUE, Integer.MAX_VALUE)
        : signedBoundaries(64, Long.MIN_VALUE, Long.MAX_VALUE);
    for (long v : signed) s.add(v);
    for (int k = 0; k < width; k += 7) {
      for (long d = -1; d <= 1; d++) {
        long z = (1L << k) + d; // encoded (zig-zag) value, as unsigned; k=63 wraps correctly
        if (k == 0 && d < 0) continue;
        if (width == 32) {
          int zi = (int) z;
          s.add((long) ((zi >>> 1) ^ -(zi & 1)));
        } else {
          s.add((z >>> 1) ^ -(z & 1));
        }
      }
    }
    // encoded all-ones (min value) and encoded max
    if (width == 32) { s.add((long) Integer.MIN_VALUE); s.add((long) Integer.MAX_VALUE); }
    else { s.add(Long.MIN_VALUE); s.add(Long.MAX_VALUE); }
    return toArray(s);
  }

  static long[] toArray(Set<Long> s) {
    long[] a = new long[s.size()];
    int i = 0;
    for (long v : s) a[i++] = v;
    return a;
  }

  // ---------------------------------------------------------------------
  // Random values

  /** Random value whose magnitude has a uniformly random bit length in [0, width]. */
  static long randomBits(Random r, int width) {
    int bits = r.nextInt(width + 1);
    if (bits == 0) return 0;
    long v = r.nextLong();
    if (bits < 64) v &= (1L << bits) - 1;
    if (bits < 64) v |= 1L << (bits - 1); // exact bit length
    return v;
  }

  static long randomNumber(Random r, Kind kind, long[] boundaries) {
    if (r.nextInt(100) < 55) {
      return boundaries[r.nextInt(boundaries.length)];
    }
    switch (kind) {
      case VINT: {
        long v = randomBits(r, 32);
        return (long) (int) v; // bit 31 set -> negative int -> 5-byte vint
      }
      case VLONG: return randomBits(r, 63);
      case ZINT: {
        long v = randomBits(r, 31);
        return r.nextBoolean() ? v : -v - (r.nextBoolean() ? 0 : 1);
      }
      case ZLONG: {
        long v = randomBits(r, 63);
        return r.nextBoolean() ? v : -v - (r.nextBoolean() ? 0 : 1);
      }
      case INT: return r.nextInt();
      case LONG: return r.nextLong();
      case SHORT: return (short) r.nextInt();
      case BYTE: return r.nextInt(256);
      default: throw new AssertionError(kind);
    }
  }

  static final int[] SAMPLE_CODE_POINTS = {
    0x00, 0x01, 0x41, 0x7F,                 // 1 byte (incl. NUL)
    0x80, 0xE9, 0x3A9, 0x7FF,               // 2 bytes: \u0080, é, Ω, \u07FF
    0x800, 0x20AC, 0x4E2D, 0xFFFD, 0xFFFF,  // 3 bytes: \u0800, €, 中, replacement, U+FFFF
    0xD7FF, 0xE000,                         // 3 bytes around the surrogate gap
    0x10000, 0x1F600, 0x1D11E, 0x10FFFF     // 4 bytes: U+10000, 😀, 𝄞, max
  };

  static int randomCodePoint(Random r, int utf8Len) {
    switch (utf8Len) {
      case 1: return 0x20 + r.nextInt(0x7F - 0x20);
      case 2: return 0x80 + r.nextInt(0x800 - 0x80);
      case 3: {
        int cp;
        do { cp = 0x800 + r.nextInt(0x10000 - 0x800); } while (cp >= 0xD800 && cp <= 0xDFFF);
        return cp;
      }
      case 4: return 0x10000 + r.nextInt(0x110000 - 0x10000);
      default: throw new AssertionError(utf8Len);
    }
  }

  static String randomString(Random r) {
    int mode = r.nextInt(10);
    int len;
    if (mode == 0) return "";
    if (mode <= 5) len = 1 + r.nextInt(12);           // short
    else if (mode <= 8) len = 13 + r.nextInt(60);     // medium
    else len = 100 + r.nextInt(400);                  // long: > 127 bytes
    StringBuilder sb = new StringBuilder();
    boolean asciiOnly = r.nextInt(4) == 0;
    for (int i = 0; i < len; i++) {
      int cp;
      if (asciiOnly) cp = randomCodePoint(r, 1);
      else if (r.nextInt(5) == 0) cp = SAMPLE_CODE_POINTS[r.nextInt(SAMPLE_CODE_POINTS.length)];
      else cp = randomCodePoint(r, 1 + r.nextInt(4));
      sb.appendCodePoint(cp);
    }
    return sb.toString();
  }

  static String repeat(char c, int n) {
    char[] a = new char[n];
    Arrays.fill(a, c);
    return new String(a);
  }

  /** Strings that must appear at least once. */
  static List<String> fixedStrings() {
    List<String> l = new ArrayList<>();
    l.add("");
    l.add("a");
    l.add("hello, lucene");
    l.add("\u0000");
    l.add("\u00e9");               // é (2 bytes)
    l.add("\u20ac");               // € (3 bytes)
    l.add("\ud83d\ude00");         // 😀 (4 bytes)
    l.add("caf\u00e9 \u20ac5 \ud83d\ude00!");
    l.add("\u0080\u07ff\u0800\uffff\ud800\udc00\udbff\udfff"); // UTF-8 length boundaries
    l.add("\ud7ff\ue000\ufffd");
    // byte lengths around the 1-/2-byte and 2-/3-byte vint length prefix
    l.add(repeat('x', 127));
    l.add(repeat('y', 128));
    l.add(repeat('z', 129));
    l.add(repeat('\u00e9', 63) + "a");             // 127 bytes, multibyte
    l.add(repeat('\u00e9', 64));                   // 128 bytes
    l.add(repeat('\u20ac', 43));                   // 129 bytes
    l.add(repeat("\ud83d\ude00", 32));             // 128 bytes of 4-byte chars
    l.add(repeat('q', 16383));
    l.add(repeat('r', 16384));
    return l;
  }

  static String repeat(String s, int n) {
    StringBuilder sb = new StringBuilder(s.length() * n);
    for (int i = 0; i < n; i++) sb.append(s);
    return sb.toString();
  }

  // ---------------------------------------------------------------------

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: WriteVectors SEED OUT.bin OUT.txt");
      System.exit(2);
    }
    final long seed = Long.parseLong(args[0]);
    final Path binPath = Paths.get(args[1]).toAbsolutePath();
    final Path txtPath = Paths.get(args[2]).toAbsolutePath();
    final Random r = new Random(seed);

    Map<Kind, long[]> bounds = new EnumMap<>(Kind.class);
    bounds.put(Kind.VINT, vintBoundaries());
    bounds.put(Kind.VLONG, vlongBoundaries());
    bounds.put(Kind.ZINT, zigzagBoundaries(32));
    bounds.put(Kind.ZLONG, zigzagBoundaries(64));
    bounds.put(Kind.INT, signedBoundaries(32, Integer.MIN_VALUE, Integer.MAX_VALUE));
    bounds.put(Kind.LONG, signedBoundaries(64, Long.MIN_VALUE, Long.MAX_VALUE));
    bounds.put(Kind.SHORT, signedBoundaries(16, Short.MIN_VALUE, Short.MAX_VALUE));
    long[] byteBounds = {0, 1, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF};
    bounds.put(Kind.BYTE, byteBounds);

    // Every boundary value once, every fixed string once, then random fill.
    List<Value> values = new ArrayList<>();
    for (Map.Entry<Kind, long[]> e : bounds.entrySet()) {
      for (long v : e.getValue()) values.add(new Value(e.getKey(), v));
    }
    for (String s : fixedStrings()) values.add(new Value(s));
    if (values.size() > TOTAL) throw new IllegalStateException("too many fixed values: " + values.size());

    Kind[] kinds = Kind.values();
    while (values.size() < TOTAL) {
      Kind k = kinds[r.nextInt(kinds.length)];
      if (k == Kind.STRING) values.add(new Value(randomString(r)));
      else values.add(new Value(k, randomNumber(r, k, bounds.get(k))));
    }
    Collections.shuffle(values, r);

    // Sanity: Lucene requires non-negative vlongs.
    for (Value v : values) {
      if (v.kind == Kind.VLONG && v.num < 0) throw new IllegalStateException("negative vlong");
    }

    // 1) Write via FSDirectory/IndexOutput (exactly what Lucene puts on disk; no header/footer).
    Path tmpDir = Files.createTempDirectory("lucene-vectors");
    byte[] fsBytes;
    try {
      try (Directory dir = FSDirectory.open(tmpDir)) {
        try (IndexOutput out = dir.createOutput("vectors.bin", IOContext.DEFAULT)) {
          for (Value v : values) v.writeTo(out);
        }
      }
      fsBytes = Files.readAllBytes(tmpDir.resolve("vectors.bin"));
    } finally {
      try (java.util.stream.Stream<Path> st = Files.walk(tmpDir)) {
        st.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }

    // 2) Write the same sequence via ByteBuffersDataOutput; it must agree byte for byte.
    ByteBuffersDataOutput bb = new ByteBuffersDataOutput();
    for (Value v : values) v.writeTo(bb);
    byte[] bbBytes = bb.toArrayCopy();
    if (!Arrays.equals(fsBytes, bbBytes)) {
      throw new IllegalStateException("FSDirectory and ByteBuffersDataOutput outputs differ");
    }

    Path binTmp = binPath.resolveSibling(binPath.getFileName() + ".tmp");
    Files.write(binTmp, fsBytes);
    Files.move(binTmp, binPath, StandardCopyOption.REPLACE_EXISTING);

    Path txtTmp = txtPath.resolveSibling(txtPath.getFileName() + ".tmp");
    Map<Kind, Integer> counts = new EnumMap<>(Kind.class);
    try (Writer w = Files.newBufferedWriter(txtTmp, StandardCharsets.UTF_8)) {
      w.write("# lucene-vectors seed=" + seed + " lucene=" + Version.LATEST + " count=" + values.size() + "\n");
      for (Value v : values) {
        w.write(v.kind.label());
        w.write(' ');
        w.write(v.listing());
        w.write('\n');
        counts.merge(v.kind, 1, Integer::sum);
      }
    }
    Files.move(txtTmp, txtPath, StandardCopyOption.REPLACE_EXISTING);

    StringBuilder summary = new StringBuilder();
    summary.append("wrote ").append(values.size()).append(" values, ").append(fsBytes.length)
        .append(" bytes, lucene ").append(Version.LATEST).append(" seed ").append(seed).append(':');
    for (Map.Entry<Kind, Integer> e : counts.entrySet()) {
      summary.append(' ').append(e.getKey().label()).append('=').append(e.getValue());
    }
    System.err.println(summary);
  }
}
