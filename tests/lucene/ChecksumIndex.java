// Times Lucene's own whole-file verification, CodecUtil.checksumEntireFile over MMapDirectory,
// on every file of an index: the baseline of the `lucene_verify` benchmark.
//
// Usage: java -cp <lucene-core.jar>:<classdir> ChecksumIndex INDEX_DIR ROUNDS
//
// Runs ROUNDS passes over all files (the first ones warm the JIT and the page cache) and prints,
// per pass, one line: `pass N files F bytes B seconds S checksum X`, where X folds every file's
// CRC, so the Rust side can prove it verified the same bytes.

import java.nio.file.Paths;
import java.util.Arrays;

import org.apache.lucene.codecs.CodecUtil;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.MMapDirectory;

public final class ChecksumIndex {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: ChecksumIndex INDEX_DIR ROUNDS");
      System.exit(2);
    }
    int rounds = Integer.parseInt(args[1]);
    try (Directory dir = new MMapDirectory(Paths.get(args[0]))) {
      String[] files = dir.listAll();
      Arrays.sort(files);
      for (int pass = 1; pass <= rounds; pass++) {
        long bytes = 0;
        long folded = 0;
        int count = 0;
        long start = System.nanoTime();
        for (String file : files) {
          if (file.equals("write.lock") || file.startsWith("pending_")) {
            continue;
          }
          try (IndexInput in = dir.openInput(file, IOContext.READONCE)) {
            long crc = CodecUtil.checksumEntireFile(in);
            bytes += in.length();
            folded = folded * 31 + crc;
            count++;
          }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(
            "pass %d files %d bytes %d seconds %.6f checksum %x%n",
            pass, count, bytes, seconds, folded);
      }
    }
  }
}
