//! What fio's net engine puts on the wire besides the data: the link messages that open and
//! close a connection, and the numbers in each datagram's trailer.

/// fio's link messages: magic and command, 8 bytes. fio writes the open message in network
/// order and the close message in little-endian order, and reads them so; so does iolab.
const LINK_MAGIC: u32 = 0x6c69_6e6b;
pub(super) const LINK_OPEN: u32 = 0x98;
pub(super) const LINK_CLOSE: u32 = 0x89;

pub(super) fn link_msg(cmd: u32) -> [u8; 8] {
    let mut m = [0u8; 8];
    if cmd == LINK_OPEN {
        m[..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
        m[4..].copy_from_slice(&cmd.to_be_bytes());
    } else {
        m[..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
        m[4..].copy_from_slice(&cmd.to_le_bytes());
    }
    m
}

/// fio's datagram numbering: a sender writes (magic, sequence, size) in the last 24 bytes of
/// each datagram, little-endian; a receiver counts the numbers it never saw as dropped.
#[derive(Default)]
pub(super) struct UdpSeq {
    sent: u64,
    expect: u64,
    /// A datagram's size was not the request's: the trailer is not fio's, stop looking.
    pub(super) off: bool,
    pub(super) dropped: u64,
}

const SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;
const SEQ_LEN: usize = 24;

impl UdpSeq {
    pub(super) fn stamp(&mut self, buf: &mut [u8]) {
        let Some(at) = buf.len().checked_sub(SEQ_LEN) else {
            return;
        };
        let len = buf.len() as u64;
        let t = &mut buf[at..];
        t[..8].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
        t[8..16].copy_from_slice(&self.sent.to_le_bytes());
        t[16..].copy_from_slice(&len.to_le_bytes());
        self.sent += 1;
    }

    pub(super) fn check(&mut self, buf: &[u8]) {
        let Some(at) = buf.len().checked_sub(SEQ_LEN).filter(|_| !self.off) else {
            return;
        };
        let word =
            |i: usize| u64::from_le_bytes(buf[at + i..at + i + 8].try_into().unwrap_or([0; 8]));
        if word(0) != SEQ_MAGIC {
            return;
        }
        if word(16) != buf.len() as u64 {
            self.off = true;
            return;
        }
        let seq = word(8);
        self.dropped += seq.saturating_sub(self.expect);
        self.expect = seq + 1;
    }
}
