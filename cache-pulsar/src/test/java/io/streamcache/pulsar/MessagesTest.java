package io.streamcache.pulsar;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The checks the cluster tests rely on catch what they are meant to catch. */
class MessagesTest {

    @Test
    void aMessageCarriesItsProducerSequenceAndContent() {
        final byte[] message = Messages.encode(7, 123_456_789L, 1000);
        assertEquals(Messages.HEADER + 1000, message.length);
        assertEquals(7, Messages.producer(message));
        assertEquals(123_456_789L, Messages.sequence(message));
        Messages.check(message);
    }

    @Test
    void everyChangedByteOfTheContentIsCaught() {
        final byte[] message = Messages.encode(1, 42, 301);
        for (int i = Messages.HEADER; i < message.length; i++) {
            message[i] ^= 1;
            assertThrows(AssertionError.class, () -> Messages.check(message));
            message[i] ^= 1;
        }
        Messages.check(message);
    }

    @Test
    void anotherSequencesContentIsCaught() {
        final byte[] message = Messages.encode(1, 42, 64);
        final byte[] other = Messages.encode(1, 43, 64);
        System.arraycopy(other, Messages.HEADER, message, Messages.HEADER, 64);
        assertThrows(AssertionError.class, () -> Messages.check(message));
    }

    @Test
    void aTruncatedMessageIsCaught() {
        final byte[] message = Messages.encode(2, 5, 100);
        final byte[] truncated = java.util.Arrays.copyOf(message, message.length - 1);
        assertThrows(AssertionError.class, () -> Messages.check(truncated));
    }

    @Test
    void partitionIndexIsReadFromThePartitionsName() {
        assertEquals(3, Messages.partition("persistent://public/default/orders-partition-3"));
        assertEquals(12, Messages.partition("persistent://public/default/a-b-partition-12"));
    }
}
