package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordCodec;
import io.streamcache.log.internal.LogRecordDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.PADDING_HEADER_LENGTH;

/**
 * Iterates the records of one log file and validates them; one thread at a time (it reuses its
 * buffer, CRC and record view: a scan allocates nothing per record). Reusable for any number of
 * files, one after the other.
 *
 * <h2>Validation</h2>
 * The header (page 0): FILE_MAGIC, VERSION, PAGE_LENGTH, FILE_NUMBER equal to the number in the
 * file's name, FILE_LENGTH a multiple of the page of at least two pages, the header CRC. Then
 * every record from {@link LogFileDescriptor#FIRST_RECORD_POSITION}, each at the 8-byte-aligned
 * position where the previous one ends (the record checks are {@link LogRecordCodec}'s, shared
 * with historical reads; placement is this scanner's):
 * <ul>
 *   <li>MAGIC, FLAGS = 0 (or {@link LogRecordDescriptor#FLAG_COPY} on DATA), a known TYPE;</li>
 *   <li>a PADDING record must start inside a page and end exactly at the next page boundary
 *       (it is then skipped: never taken for the end of the log);</li>
 *   <li>LENGTH within the file, 0 for SEAL, TRUNCATE and DELETE, at least 4 for SNAPSHOT (its
 *       COUNT);</li>
 *   <li>the CRC32C seeded with the file number: a stale record of another file never validates;</li>
 *   <li>placement, checked once the CRC holds: the record at FIRST_RECORD_POSITION is a SNAPSHOT
 *       and no other is; SNAPSHOT has SEGMENT_ID and SEGMENT_OFFSET 0, CREATE and DELETE
 *       SEGMENT_OFFSET 0; no SEGMENT_OFFSET is negative. A record that validates but is
 *       misplaced was written so by someone: it is {@link ScanEnd#CORRUPT}, never torn.</li>
 * </ul>
 *
 * <h2>Classifying the end</h2>
 * At the first bytes that do not validate, the scanner <em>probes</em> the rest of the file:
 * it tries a record at every later page boundary (every write starts on one) and follows the
 * chain of records from each one that validates. Then:
 * <pre>
 *  nothing valid after, a zero page at a page boundary        ZEROS    the end of what was written
 *  nothing valid after, other bytes at a page boundary         STALE    the end, then a recycled file's
 *                                                                       old records (or a torn page)
 *  nothing valid after, inside a page                          TORN     a write cut short (every write
 *                                                                       ends with padding to a boundary)
 *  valid records after, all within the torn-write window       TORN     pages of the last write persisted
 *                                                                       out of order (a power cut)
 *  valid records after, beyond the window                      CORRUPT  bytes lost or damaged in the middle
 * </pre>
 * The <b>torn-write window</b> is the most bytes a crash can leave half-written: the largest
 * write the writer issues times the writes it has in flight. A device persists the pages of an
 * unfinished write in any order, so a hole followed by valid records within one write is a torn
 * write, not corruption. Measured from the page of the first invalid byte to the end of the last
 * valid record after it. The probe reads the rest of the file (sequentially, in chunks); it
 * also notes the last nonzero page within the window, so that a cut can zero everything a later
 * scan could mistake for data ({@link LogFileScan#zeroEnd()}).
 *
 * <h2>Reading</h2>
 * The file is read with positional reads into one direct buffer in page-aligned chunks
 * ({@link #CHUNK_LENGTH_DEFAULT} by default). A record that does not fit the buffer has its CRC
 * computed as it streams through; its payload is loaded (the buffer grown) only for CREATE and
 * SNAPSHOT records, whose payloads recovery needs, and only once the CRC holds, so a damaged
 * LENGTH never makes the scanner allocate.
 */
public final class LogScanner {
    /** Default read size: 1 MiB. */
    public static final int CHUNK_LENGTH_DEFAULT = 1 << 20;
    /** Default torn-write window: 8 MiB. */
    public static final long TORN_WRITE_WINDOW_DEFAULT = 8L << 20;

    private static final int PAGE_MASK = PAGE_LENGTH - 1;
    private static final int RECORD = 0;
    private static final int PADDING = 1;
    private static final int INVALID = 2;

    private static final String BAD_CRC = LogRecordCodec.BAD_CRC;
    /** CRC32C (Castagnoli) polynomial, bit-reflected as java.util.zip.CRC32C computes it. */
    private static final int CRC32C_REFLECTED = 0x82F6_3B78;
    private static final String TRUNCATED = "the file ends inside a record";

    private final int chunkLength;
    private final long tornWriteWindow;
    private final CRC32C crc = new CRC32C();
    private final LogRecordView view = new LogRecordView();
    private ByteBuffer buffer;
    /** File position of buffer index 0. */
    private long bufferPosition;
    /** Valid bytes in the buffer. */
    private int bufferLength;
    private long bytesRead;

    private FileChannel channel;
    private long fileNumber;
    private long limit;
    private String invalidReason;

    private byte type;
    private int length;

    /**
     * A scanner reading 1 MiB chunks with an 8 MiB torn-write window.
     */
    public LogScanner() {
        this(CHUNK_LENGTH_DEFAULT, TORN_WRITE_WINDOW_DEFAULT);
    }

    /**
     * @param chunkLength     bytes per read: a multiple of the page, at least 4 pages.
     * @param tornWriteWindow the most bytes a crash can leave half-written (see the class
     *                        comment); at least 0.
     */
    public LogScanner(final int chunkLength, final long tornWriteWindow) {
        if (chunkLength < 4 * PAGE_LENGTH || (chunkLength & PAGE_MASK) != 0) {
            throw new IllegalArgumentException("chunkLength=" + chunkLength + " must be a multiple of " + PAGE_LENGTH
                + " and at least " + 4 * PAGE_LENGTH);
        }
        if (tornWriteWindow < 0) {
            throw new IllegalArgumentException("tornWriteWindow=" + tornWriteWindow + " must be >= 0");
        }
        this.chunkLength = chunkLength;
        this.tornWriteWindow = tornWriteWindow;
        this.buffer = ByteBuffer.allocateDirect(chunkLength).order(ByteOrder.LITTLE_ENDIAN);
    }

    public int chunkLength() {
        return chunkLength;
    }

    public long tornWriteWindow() {
        return tornWriteWindow;
    }

    /**
     * Scans a whole file: validates the header, reports every valid record to {@code visitor} in
     * file order, and classifies the first invalid bytes.
     *
     * @param channel    the file, open for reading; its position is not used.
     * @param fileNumber the number in the file's name: the header must agree, and it seeds the CRCs.
     * @param visitor    receives the valid records (not padding).
     * @return what the scan found.
     * @throws IOException if reading fails.
     */
    public LogFileScan scan(final FileChannel channel, final long fileNumber, final LogRecordVisitor visitor) throws IOException {
        begin(channel, fileNumber);
        final long size = channel.size();
        final LogFileScan scan = new LogFileScan(fileNumber, size);
        limit = size;
        final String headerProblem = checkHeader(size);
        if (headerProblem != null) {
            scan.header(false, -1, -1);
            probe(scan, FIRST_RECORD_POSITION, true);
            scan.end(ScanEnd.BAD_HEADER, 0, headerProblem);
            scan.bytesRead(bytesRead);
            return scan;
        }
        final long fileLength = buffer.getLong((int) (LogFileDescriptor.FILE_LENGTH_OFFSET - bufferPosition));
        scan.header(true, fileLength, buffer.getLong((int) (LogFileDescriptor.EPOCH_OFFSET - bufferPosition)));
        limit = Math.min(size, fileLength);
        long position = FIRST_RECORD_POSITION;
        while (true) {
            if (position >= limit) {
                if (limit == fileLength) {
                    scan.end(ScanEnd.END_OF_FILE, position, null);
                } else {
                    // Cut short: the missing bytes are what was never written (or lost).
                    scan.later(-1, -1, -1);
                    scan.end((position & PAGE_MASK) == 0 ? ScanEnd.ZEROS : ScanEnd.TORN, position,
                        "the file ends at size=" + size + ", before FILE_LENGTH=" + fileLength);
                }
                break;
            }
            final int code = validate(position);
            if (code == RECORD) {
                final String misplaced = misplaced(position);
                if (misplaced != null) {
                    probe(scan, position, true);
                    scan.end(ScanEnd.CORRUPT, position, misplaced);
                    break;
                }
                final byte recordType = type;
                final int recordLength = length;
                if (!visitor.onRecord(view)) {
                    probe(scan, position, true);
                    scan.end(ScanEnd.STOPPED, position, "the visitor stopped the scan at a " + typeName(recordType) + " record");
                    break;
                }
                scan.countRecord(recordType, recordLength);
                position += LogRecordDescriptor.alignedLength(recordLength);
            } else if (code == PADDING) {
                scan.countPadding();
                position = nextPage(position);
            } else {
                classify(scan, position);
                break;
            }
        }
        scan.bytesRead(bytesRead);
        return scan;
    }

    /**
     * Checks cheaply whether a file has begun: its header validates and a valid SNAPSHOT record
     * starts at {@link LogFileDescriptor#FIRST_RECORD_POSITION}. Reads one chunk.
     *
     * @throws IOException if reading fails.
     */
    public boolean hasSnapshot(final FileChannel channel, final long fileNumber) throws IOException {
        begin(channel, fileNumber);
        final long size = channel.size();
        limit = size;
        if (checkHeader(size) != null) {
            return false;
        }
        limit = Math.min(size, buffer.getLong((int) (LogFileDescriptor.FILE_LENGTH_OFFSET - bufferPosition)));
        return FIRST_RECORD_POSITION < limit && validate(FIRST_RECORD_POSITION) == RECORD
            && type == LogRecordDescriptor.TYPE_SNAPSHOT;
    }

    /**
     * Hands a file's first record to {@code visitor} if the header validates and the record is a
     * valid SNAPSHOT, reading nothing after it (the {@link Checkpointer} checks the SNAPSHOT of
     * the file being written).
     *
     * @return the header's EPOCH, or -1 if the header or the SNAPSHOT does not validate.
     * @throws IOException if reading fails.
     */
    long firstSnapshot(final FileChannel channel, final long fileNumber, final LogRecordVisitor visitor) throws IOException {
        begin(channel, fileNumber);
        final long size = channel.size();
        limit = size;
        if (checkHeader(size) != null) {
            return -1;
        }
        final long epoch = buffer.getLong((int) (LogFileDescriptor.EPOCH_OFFSET - bufferPosition));
        limit = Math.min(size, buffer.getLong((int) (LogFileDescriptor.FILE_LENGTH_OFFSET - bufferPosition)));
        if (FIRST_RECORD_POSITION < limit && validate(FIRST_RECORD_POSITION) == RECORD
            && type == LogRecordDescriptor.TYPE_SNAPSHOT) {
            visitor.onRecord(view);
            return epoch;
        }
        return -1;
    }

    private void begin(final FileChannel channel, final long fileNumber) {
        this.channel = channel;
        this.fileNumber = fileNumber;
        this.bufferPosition = 0;
        this.bufferLength = 0;
        this.bytesRead = 0;
        this.invalidReason = null;
    }

    // ------------------------------------------------------------------------------------------
    // Header and records
    // ------------------------------------------------------------------------------------------

    /**
     * @return null if the header validates (its bytes then in the buffer), else what is wrong.
     */
    private String checkHeader(final long size) throws IOException {
        if (size < PAGE_LENGTH || !ensure(0, LogFileDescriptor.HEADER_LENGTH)) {
            return "size=" + size + " is shorter than the header page";
        }
        final int index = (int) -bufferPosition;
        crc.reset();
        buffer.limit(index + LogFileDescriptor.HEADER_CRC_OFFSET).position(index);
        crc.update(buffer);
        buffer.clear();
        final int storedCrc = buffer.getInt(index + LogFileDescriptor.HEADER_CRC_OFFSET);
        if ((int) crc.getValue() != storedCrc) {
            final boolean zeros = buffer.getLong(index) == 0 && storedCrc == 0;
            return zeros ? "the header page is zeros (a file whose creation was cut short)" : "header CRC mismatch";
        }
        final long magic = buffer.getLong(index + LogFileDescriptor.FILE_MAGIC_OFFSET);
        if (magic != LogFileDescriptor.FILE_MAGIC) {
            return "FILE_MAGIC=0x" + Long.toHexString(magic) + " is not 0x" + Long.toHexString(LogFileDescriptor.FILE_MAGIC);
        }
        final int version = buffer.getInt(index + LogFileDescriptor.VERSION_OFFSET);
        if (version != LogFileDescriptor.VERSION) {
            return "VERSION=" + version + " is not " + LogFileDescriptor.VERSION;
        }
        final int pageLength = buffer.getInt(index + LogFileDescriptor.PAGE_LENGTH_OFFSET);
        if (pageLength != PAGE_LENGTH) {
            return "PAGE_LENGTH=" + pageLength + " is not " + PAGE_LENGTH;
        }
        final long headerNumber = buffer.getLong(index + LogFileDescriptor.FILE_NUMBER_OFFSET);
        if (headerNumber != fileNumber) {
            return "FILE_NUMBER=" + headerNumber + " in the header, fileNumber=" + fileNumber + " in the name";
        }
        final long fileLength = buffer.getLong(index + LogFileDescriptor.FILE_LENGTH_OFFSET);
        if (fileLength < 2L * PAGE_LENGTH || (fileLength & PAGE_MASK) != 0) {
            return "FILE_LENGTH=" + fileLength + " is not a multiple of " + PAGE_LENGTH + " of at least two pages";
        }
        return null;
    }

    /**
     * Validates the record at {@code position}: on {@link #RECORD} the view is set (and the fields
     * {@link #type}, {@link #length}); on {@link #PADDING} {@link #length} is set; on
     * {@link #INVALID} {@link #invalidReason} says why.
     */
    private int validate(final long position) throws IOException {
        if (position + PADDING_HEADER_LENGTH > limit || !ensure(position, PADDING_HEADER_LENGTH)) {
            invalidReason = TRUNCATED;
            return INVALID;
        }
        int index = (int) (position - bufferPosition);
        final String headerProblem = LogRecordCodec.checkHeader(buffer, index, position, limit);
        if (headerProblem != null) {
            invalidReason = headerProblem;
            return INVALID;
        }
        final byte recordType = buffer.get(index + LogRecordDescriptor.TYPE_OFFSET);
        final int recordLength = buffer.getInt(index + LogRecordDescriptor.LENGTH_OFFSET);
        if (recordType == LogRecordDescriptor.TYPE_PADDING) {
            length = recordLength;
            return PADDING;
        }
        final int total = HEADER_LENGTH + recordLength;
        final boolean fits = total <= buffer.capacity() - PAGE_LENGTH;
        if (fits) {
            if (!ensure(position, total)) {
                invalidReason = TRUNCATED;
                return INVALID;
            }
            index = (int) (position - bufferPosition);
            final boolean matches = LogRecordCodec.crcMatches(crc, fileNumber, buffer, index, recordLength);
            buffer.clear();
            if (!matches) {
                invalidReason = BAD_CRC;
                return INVALID;
            }
        } else {
            if (!ensure(position, HEADER_LENGTH) || !streamCrcMatches(position, recordLength)) {
                return INVALID;
            }
            if (recordType == LogRecordDescriptor.TYPE_CREATE || recordType == LogRecordDescriptor.TYPE_SNAPSHOT) {
                grow(total + PAGE_LENGTH);
                if (!ensure(position, total)) {
                    invalidReason = TRUNCATED;
                    return INVALID;
                }
            } else if (!ensure(position, HEADER_LENGTH)) {
                invalidReason = TRUNCATED;
                return INVALID;
            }
            index = (int) (position - bufferPosition);
        }
        type = recordType;
        length = recordLength;
        view.set(fileNumber, position, recordType, buffer.getInt(index + LogRecordDescriptor.SEGMENT_ID_OFFSET),
            buffer.getLong(index + LogRecordDescriptor.SEGMENT_OFFSET_OFFSET), recordLength);
        view.flags(buffer.get(index + LogRecordDescriptor.FLAGS_OFFSET));
        if (fits || recordType == LogRecordDescriptor.TYPE_CREATE || recordType == LogRecordDescriptor.TYPE_SNAPSHOT) {
            view.payload(buffer, index + HEADER_LENGTH);
        }
        return RECORD;
    }

    /**
     * Computes the CRC of a record longer than the buffer chunk by chunk; its header is in the buffer.
     */
    private boolean streamCrcMatches(final long position, final int recordLength) throws IOException {
        int index = (int) (position - bufferPosition);
        final int stored = LogRecordCodec.storedCrc(buffer, index);
        LogRecordCodec.startCrc(crc, fileNumber, buffer, index);
        buffer.clear();
        long next = position + HEADER_LENGTH;
        long remaining = recordLength;
        while (remaining > 0) {
            if (!ensure(next, 1)) {
                invalidReason = TRUNCATED;
                return false;
            }
            index = (int) (next - bufferPosition);
            final int n = (int) Math.min(remaining, bufferLength - index);
            buffer.limit(index + n).position(index);
            crc.update(buffer);
            next += n;
            remaining -= n;
        }
        buffer.clear();
        if ((int) crc.getValue() != stored) {
            invalidReason = BAD_CRC;
            return false;
        }
        return true;
    }

    /**
     * @return null if the valid record just validated at {@code position} is where the format
     *         allows it, else what is wrong.
     */
    private String misplaced(final long position) {
        if (position == FIRST_RECORD_POSITION && type != LogRecordDescriptor.TYPE_SNAPSHOT) {
            return "the first record is a " + typeName(type) + ", not a SNAPSHOT";
        }
        if (position != FIRST_RECORD_POSITION && type == LogRecordDescriptor.TYPE_SNAPSHOT) {
            return "a SNAPSHOT record that is not the first record of the file";
        }
        final long segmentOffset = view.segmentOffset();
        if (type == LogRecordDescriptor.TYPE_SNAPSHOT && (view.segmentId() != 0 || segmentOffset != 0)) {
            return "SNAPSHOT with segmentId=" + view.segmentId() + " segmentOffset=" + segmentOffset + " (both must be 0)";
        }
        if ((type == LogRecordDescriptor.TYPE_CREATE || type == LogRecordDescriptor.TYPE_DELETE) && segmentOffset != 0) {
            return typeName(type) + " with segmentOffset=" + segmentOffset + " (must be 0)";
        }
        if (segmentOffset < 0) {
            return typeName(type) + " with segmentOffset=" + Long.toUnsignedString(segmentOffset) + " (beyond 2^63)";
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------
    // Classifying the end
    // ------------------------------------------------------------------------------------------

    private void classify(final LogFileScan scan, final long position) throws IOException {
        final String reason = invalidReason;
        final boolean zeroPage = (position & PAGE_MASK) == 0 && isZero(position, Math.min(position + PAGE_LENGTH, limit));
        final long flippedBit = BAD_CRC.equals(reason) ? singleBitFlip(position) : -1;
        probe(scan, position, false);
        if (flippedBit != -1) {
            scan.end(ScanEnd.CORRUPT, position, reason + " explained by one flipped bit (" + (flippedBit == -2 ? "in the stored CRC"
                : "bit=" + flippedBit + " of the CRC-covered bytes") + "): the record was written whole and damaged since, not torn");
        } else if (scan.laterRecordPosition() < 0) {
            final ScanEnd end = zeroPage ? ScanEnd.ZEROS : (position & PAGE_MASK) == 0 ? ScanEnd.STALE : ScanEnd.TORN;
            scan.end(end, position, reason);
        } else if (scan.laterRecordEnd() - (position & ~PAGE_MASK) <= tornWriteWindow) {
            scan.end(ScanEnd.TORN, position, reason + "; valid records follow up to position=" + scan.laterRecordEnd()
                + ", within tornWriteWindow=" + tornWriteWindow);
        } else {
            scan.end(ScanEnd.CORRUPT, position, reason + ", and a valid record follows at position="
                + scan.laterRecordPosition() + " (valid records up to position=" + scan.laterRecordEnd()
                + ", beyond tornWriteWindow=" + tornWriteWindow + ")");
        }
    }

    /**
     * A record whose header validates but whose CRC does not: was it damaged in place (a flipped
     * bit) rather than torn? A write cut short leaves whole sectors unwritten (zeros or a
     * recycled file's old bytes), which change many bits; a flipped bit changes one. CRC32C is
     * linear, so the difference between the stored and the computed CRC (the syndrome) tells
     * whether one flipped bit of the covered bytes (or of the stored CRC) explains the mismatch:
     * if so, the record was written whole and damaged since. A torn record matches by chance with
     * a probability of about (covered bits) / 2^32 (1 in 512 for a 1 MiB record): it then fails
     * the open instead of being cut, losing nothing. Records longer than the read buffer are not
     * checked (they stay torn-or-corrupt by the window rule).
     *
     * @return the bit index (in CRC order: file number, header, payload) of the flip, -2 if the
     *         flip is in the stored CRC, or -1 if no single flip explains the mismatch.
     */
    private long singleBitFlip(final long position) throws IOException {
        if (!ensure(position, HEADER_LENGTH)) {
            return -1;
        }
        final int recordLength = buffer.getInt((int) (position - bufferPosition) + LogRecordDescriptor.LENGTH_OFFSET);
        final long total = HEADER_LENGTH + (long) recordLength;
        if (recordLength < 0 || total > buffer.capacity() - PAGE_LENGTH || total > limit - position || !ensure(position, (int) total)) {
            return -1;
        }
        final int index = (int) (position - bufferPosition);
        final int computed = LogRecordDescriptor.crc(crc, fileNumber, buffer, index, recordLength);
        buffer.clear();
        final int syndrome = computed ^ buffer.getInt(index + LogRecordDescriptor.CRC_OFFSET);
        if (Integer.bitCount(syndrome) == 1) {
            return -2;
        }
        // Bytes covered: the file number (8), header [0, 12) and [16, 24), the payload.
        final long bits = 8L * (Long.BYTES + LogRecordDescriptor.CRC_OFFSET + Long.BYTES + recordLength);
        // The CRC difference a flip of the message's last bit makes, then each earlier bit's, one shift at a time.
        int difference = 1;
        for (long distance = 0; distance < bits; distance++) {
            difference = (difference & 1) != 0 ? (difference >>> 1) ^ CRC32C_REFLECTED : difference >>> 1;
            if (difference == syndrome) {
                final long bit = bits - 1 - distance;
                // A "flip" in the file number is a stale record of a recycled file whose number
                // differs from this one's in one bit: its CRC was seeded with the other number.
                return bit < 8L * Long.BYTES ? -1 : bit;
            }
        }
        return -1;
    }

    /**
     * Looks for valid records after {@code from}: at {@code from} itself if {@code chain}, then at
     * every page boundary, following the chain of records from each one found; notes the last
     * nonzero page within the torn-write window.
     */
    private void probe(final LogFileScan scan, final long from, final boolean chain) throws IOException {
        final long windowEnd = saturatedAdd(from & ~PAGE_MASK, tornWriteWindow);
        long firstRecord = -1;
        long lastEnd = -1;
        long dirtyEnd = -1;
        long position;
        if (chain) {
            position = from;
        } else {
            position = nextPage(from);
            if (!isZero(from, Math.min(position, limit))) {
                dirtyEnd = Math.min(position, limit);
            }
        }
        while (position < limit) {
            if ((position & PAGE_MASK) == 0 && position < windowEnd) {
                final long pageEnd = Math.min(position + PAGE_LENGTH, limit);
                if (!isZero(position, pageEnd)) {
                    dirtyEnd = pageEnd;
                }
            }
            final int code = validate(position);
            if (code == RECORD) {
                if (firstRecord < 0) {
                    firstRecord = position;
                }
                position += LogRecordDescriptor.alignedLength(length);
                lastEnd = position;
            } else {
                position = nextPage(position);
            }
        }
        scan.later(firstRecord, lastEnd, dirtyEnd);
    }

    // ------------------------------------------------------------------------------------------
    // Buffer
    // ------------------------------------------------------------------------------------------

    /**
     * Makes bytes {@code [position, position + count)} available in the buffer, reading a
     * page-aligned chunk from the page of {@code position} if they are not.
     *
     * @return false if the file ends before them.
     */
    private boolean ensure(final long position, final int count) throws IOException {
        if (position >= bufferPosition && position + count <= bufferPosition + bufferLength) {
            return true;
        }
        if (position + count > limit) {
            return false;
        }
        final long readPosition = position & ~PAGE_MASK;
        grow((int) (position - readPosition) + count);
        final int toRead = (int) Math.min(buffer.capacity(), limit - readPosition);
        buffer.clear().limit(toRead);
        int n = 0;
        while (n < toRead) {
            final int read = channel.read(buffer, readPosition + n);
            if (read < 0) {
                break;
            }
            n += read;
        }
        bytesRead += n;
        bufferPosition = readPosition;
        bufferLength = n;
        return position + count <= readPosition + n;
    }

    private void grow(final int capacity) {
        if (capacity > buffer.capacity()) {
            buffer = ByteBuffer.allocateDirect((int) LogRecordDescriptor.align((long) capacity, PAGE_LENGTH))
                .order(ByteOrder.LITTLE_ENDIAN);
            bufferPosition = 0;
            bufferLength = 0;
        }
    }

    private boolean isZero(final long from, final long to) throws IOException {
        if (to <= from || !ensure(from, (int) (to - from))) {
            return true;
        }
        int index = (int) (from - bufferPosition);
        final int end = (int) (to - bufferPosition);
        for (; index + Long.BYTES <= end; index += Long.BYTES) {
            if (buffer.getLong(index) != 0) {
                return false;
            }
        }
        for (; index < end; index++) {
            if (buffer.get(index) != 0) {
                return false;
            }
        }
        return true;
    }

    private static long nextPage(final long position) {
        return (position & ~PAGE_MASK) + PAGE_LENGTH;
    }

    private static long saturatedAdd(final long a, final long b) {
        final long sum = a + b;
        return sum < a ? Long.MAX_VALUE : sum;
    }

    static String typeName(final byte type) {
        return switch (type) {
            case LogRecordDescriptor.TYPE_PADDING -> "PADDING";
            case LogRecordDescriptor.TYPE_DATA -> "DATA";
            case LogRecordDescriptor.TYPE_CREATE -> "CREATE";
            case LogRecordDescriptor.TYPE_SEAL -> "SEAL";
            case LogRecordDescriptor.TYPE_TRUNCATE -> "TRUNCATE";
            case LogRecordDescriptor.TYPE_DELETE -> "DELETE";
            case LogRecordDescriptor.TYPE_SNAPSHOT -> "SNAPSHOT";
            default -> "type " + type;
        };
    }
}
