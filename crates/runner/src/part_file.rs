//! A part's Parquet file, encoded straight from the rows.
//!
//! The record schema is fixed ([`crate::records`]), so a part is not built as a DataFrame and
//! handed to Polars' writer (which converted every column, tried a dictionary for each, took
//! statistics, and made a zstd context for every page): each column chunk is encoded here from
//! the rows, into buffers that a writer thread keeps from part to part.
//!
//! - integers: a column sorted or nearly (the deal and round numbers within a part) as
//!   DELTA_BINARY_PACKED, one or two bits a row (a million rounds: 21 MB against 28 with
//!   both as dictionaries); else, when the values of a row group lie in a range no wider
//!   than its rows (seat, coins, hand values), a dictionary page of the whole range and the
//!   keys (`value - min`, no hashing) bit-packed as RLE_DICTIONARY; else PLAIN
//!   (little-endian). Booleans: PLAIN (bit-packed);
//! - enum columns: a dictionary page of all the column's categories (PLAIN strings) and the
//!   codes as RLE_DICTIONARY keys, so readers see the same dictionary column as before;
//! - every column is optional, as Polars writes them: definition levels are one RLE run
//!   (all present), except for `decision_ns`, whose levels say which rows have a value;
//! - one data page per column and row group (row groups of at most [`ROW_GROUP_ROWS`] rows,
//!   Polars' default), each compressed by zstd level 1 through the thread's one context;
//! - no statistics (no reader of records filters on them: the report and the runner read
//!   whole columns, and the footer's [`crate::dataset::PartMeta`] says what a part holds).
//!
//! polars-parquet's [`FileWriter`] lays out the pages and writes the footer, which carries the
//! Arrow schema that Polars itself writes for the record frame (`ARROW:schema`: enum columns
//! read back as Polars `Enum`s, pandas `category`), so a part reads as it did when Polars
//! wrote it, and parts written by either read alike.

use std::cell::RefCell;
use std::io::Write;

use polars_core::prelude::{ArrowSchema, CompatLevel, PolarsResult};
use polars_parquet::parquet::CowBuffer;
use polars_parquet::parquet::compression::Compression;
use polars_parquet::parquet::encoding::{bitpacked, hybrid_rle, uleb128, zigzag_leb128};
use polars_parquet::parquet::error::ParquetError;
use polars_parquet::parquet::fallible_streaming_iterator;
use polars_parquet::parquet::metadata::{KeyValue, SchemaDescriptor};
use polars_parquet::parquet::page::{
    CompressedDataPage, CompressedDictPage, CompressedPage, DataPageHeader, DataPageHeaderV1,
    FormatEncoding,
};
use polars_parquet::parquet::write::{
    DynIter, DynStreamingIterator, FileWriter, Version, WriteOptions,
};
use polars_parquet::write::{schema_to_metadata_key, to_parquet_schema};

use crate::records::{Categories, Records, Row};

/// Rows in a row group at most (Polars' default); a unit is never split between two.
const ROW_GROUP_ROWS: usize = 512 * 512;

/// The zstd level of pages: level 1 (measured on a million rounds with Polars' writer: 27 MB
/// and 6% faster runs than zstd's default level, 25 MB; LZ4 was as fast and 37 MB).
const ZSTD_LEVEL: i32 = 1;

/// What every part of a stage shares: the file schemas and the enum columns' dictionary pages,
/// made once per stage.
pub struct PartSchema {
    parquet: SchemaDescriptor,
    /// `ARROW:schema`, the footer entry by which Polars, pyarrow and DuckDB know the types.
    arrow_key: KeyValue,
    /// The dictionary page (PLAIN strings, uncompressed) of each enum column and its length.
    pub(crate) stage: Dictionary,
    pub(crate) agent: Dictionary,
    pub(crate) end_reason: Dictionary,
}

/// An enum column's categories as a dictionary page.
pub(crate) struct Dictionary {
    page: Vec<u8>,
    len: usize,
}

impl Dictionary {
    fn new<'a>(names: impl Iterator<Item = &'a str>) -> Dictionary {
        let (mut page, mut len) = (Vec::new(), 0);
        for name in names {
            page.extend_from_slice(&(name.len() as u32).to_le_bytes());
            page.extend_from_slice(name.as_bytes());
            len += 1;
        }
        Dictionary { page, len }
    }
}

impl PartSchema {
    /// The schemas of the record frame with `cats`' categories, as Polars' writer derives them.
    pub fn new(cats: &Categories) -> PolarsResult<PartSchema> {
        let empty = crate::records::frame(&[], cats)?;
        let arrow: ArrowSchema = empty
            .schema()
            .iter()
            .map(|(name, dtype)| {
                let field = dtype.to_arrow_field(name.clone(), CompatLevel::newest());
                (field.name.clone(), field)
            })
            .collect();
        let names = cats.names();
        Ok(PartSchema {
            parquet: to_parquet_schema(&arrow)?,
            arrow_key: schema_to_metadata_key(&arrow),
            stage: Dictionary::new(std::iter::once(names.stage.as_str())),
            agent: Dictionary::new(names.agents.iter().map(String::as_str)),
            end_reason: Dictionary::new(crate::records::END_REASONS.iter().map(|e| e.as_str())),
        })
    }
}

/// A writer thread's buffers, kept from part to part.
struct Scratch {
    zstd: zstd::bulk::Compressor<'static>,
    /// A page before compression, and after.
    page: Vec<u8>,
    /// An integer column's values, and its dictionary page.
    values: Vec<u64>,
    dict: Vec<u8>,
    packed: Vec<u8>,
    /// The file, written out whole.
    file: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// Writes the rows of `chunk` to `out` as a Parquet file of the record schema, with `meta`
/// in its footer after `ARROW:schema` (in the order of Polars' writer).
pub fn write(
    out: &mut impl Write,
    chunk: &[Records],
    schema: &PartSchema,
    meta: KeyValue,
) -> PolarsResult<()> {
    SCRATCH.with_borrow_mut(|scratch| {
        if scratch.is_none() {
            *scratch = Some(Scratch {
                zstd: zstd::bulk::Compressor::new(ZSTD_LEVEL)?,
                page: Vec::new(),
                values: Vec::new(),
                dict: Vec::new(),
                packed: Vec::new(),
                file: Vec::new(),
            });
        }
        let scratch = scratch.as_mut().expect("made above");
        let mut file = std::mem::take(&mut scratch.file);
        file.clear();
        let written = write_into(&mut file, chunk, schema, meta, scratch);
        let result = written.and_then(|()| Ok(out.write_all(&file)?));
        scratch.file = file;
        result
    })
}

fn write_into(
    file: &mut Vec<u8>,
    chunk: &[Records],
    schema: &PartSchema,
    meta: KeyValue,
    scratch: &mut Scratch,
) -> PolarsResult<()> {
    let options = WriteOptions {
        write_statistics: false,
        version: Version::V1,
    };
    // The writer is named as what it is (readers work around known bugs of named writers; no
    // reader of records needs a name: the footer's `PartMeta` says what a part is).
    let mut writer = FileWriter::new(
        file,
        schema.parquet.clone(),
        options,
        Some(crate::dataset::PROGRAM.into()),
    );
    let mut start = 0;
    while start < chunk.len() {
        // Whole units, up to the row group's size (at least one unit).
        let mut end = start + 1;
        let mut rows = chunk[start].len();
        while end < chunk.len() && rows + chunk[end].len() <= ROW_GROUP_ROWS {
            rows += chunk[end].len();
            end += 1;
        }
        if rows == 0 {
            // Units without rows (none is written; Parquet's runs cannot be empty).
            start = end;
            continue;
        }
        let mut group = RowGroup {
            units: &chunk[start..end],
            rows,
            schema,
            scratch,
            columns: Vec::with_capacity(schema.parquet.columns().len()),
        };
        crate::records::encode_columns(&mut group)?;
        let columns = group.columns;
        let pages = columns.iter().map(|pages| {
            Ok(DynStreamingIterator::new(
                fallible_streaming_iterator::convert(pages.iter().map(Ok::<_, ParquetError>)),
            ))
        });
        writer.write(rows as u64, DynIter::new(pages))?;
        start = end;
    }
    writer.end(Some(vec![schema.arrow_key.clone(), meta]))?;
    Ok(())
}

/// One row group being encoded: the columns' pages, in schema order.
pub(crate) struct RowGroup<'a> {
    units: &'a [Records],
    rows: usize,
    schema: &'a PartSchema,
    scratch: &'a mut Scratch,
    columns: Vec<Vec<CompressedPage>>,
}

/// A column's encoding in its data page.
#[derive(Clone, Copy)]
enum Values {
    Plain,
    Dictionary,
    Delta,
}

impl RowGroup<'_> {
    /// Starts a data page: definition levels all 1 (every value present).
    fn begin_present(&mut self) {
        let page = &mut self.scratch.page;
        page.clear();
        // The levels' length, then one RLE run: `rows` times the value 1 (one byte wide).
        let mut run = [0u8; 10];
        let used = uleb128::encode((self.rows as u64) << 1, &mut run);
        page.extend_from_slice(&(used as u32 + 1).to_le_bytes());
        page.extend_from_slice(&run[..used]);
        page.push(1);
    }

    /// Ends the column with the data page in `scratch.page`, after a dictionary page of
    /// `dict` (its PLAIN values and their count) when it has one.
    fn finish(&mut self, values: Values, dict: Option<(&[u8], usize)>) -> PolarsResult<()> {
        let mut pages = Vec::with_capacity(2);
        let Scratch {
            zstd, page, packed, ..
        } = &mut *self.scratch;
        if let Some((dict, len)) = dict {
            pages.push(CompressedPage::Dict(CompressedDictPage::new(
                CowBuffer::Owned(compress(zstd, packed, dict)?),
                Compression::Zstd,
                dict.len(),
                len,
                false,
            )));
        }
        let header = DataPageHeader::V1(DataPageHeaderV1 {
            num_values: self.rows as i32,
            encoding: match values {
                Values::Plain => FormatEncoding::PLAIN,
                Values::Dictionary => FormatEncoding::RLE_DICTIONARY,
                Values::Delta => FormatEncoding::DELTA_BINARY_PACKED,
            },
            definition_level_encoding: FormatEncoding::RLE,
            repetition_level_encoding: FormatEncoding::RLE,
            statistics: None,
        });
        pages.push(CompressedPage::Data(CompressedDataPage::new(
            header,
            CowBuffer::Owned(compress(zstd, packed, page)?),
            Compression::Zstd,
            page.len(),
            self.schema.parquet.columns()[self.columns.len()]
                .descriptor
                .clone(),
            self.rows,
        )));
        self.columns.push(pages);
        Ok(())
    }

    pub(crate) fn u64(&mut self, get: impl Fn(&Row) -> u64) -> PolarsResult<()> {
        self.int(Int::U64, get)
    }

    /// A `u32` column (Parquet INT32, the same bits).
    pub(crate) fn u32(&mut self, get: impl Fn(&Row) -> u32) -> PolarsResult<()> {
        self.int(Int::U32, |r| u64::from(get(r)))
    }

    pub(crate) fn i64(&mut self, get: impl Fn(&Row) -> i64) -> PolarsResult<()> {
        // Flipping the sign bit orders the values as unsigned numbers (`Int::I64`).
        self.int(Int::I64, |r| get(r) as u64 ^ I64_FLIP)
    }

    /// An integer column, from values `get` ordered as unsigned numbers: DELTA_BINARY_PACKED
    /// where that is clearly smaller ([`delta_wins`]: a sorted column); else, if they lie in a
    /// range no wider than the rows (and [`MAX_RANGE`]), a dictionary of the whole range
    /// `min..=max` (no hashing: a value's key is `value - min`) and the keys bit-packed;
    /// otherwise the values PLAIN.
    fn int(&mut self, int: Int, get: impl Fn(&Row) -> u64) -> PolarsResult<()> {
        let units = self.units;
        let values = &mut self.scratch.values;
        values.clear();
        // Unit by unit: a slice's iterator knows its length, so this is a tight loop; the
        // range is taken in the same pass, not in a second pass over the values.
        let (mut min, mut max) = (u64::MAX, 0);
        for unit in units {
            values.extend(unit.rows().iter().map(|r| {
                let v = get(r);
                (min, max) = (min.min(v), max.max(v));
                v
            }));
        }
        let range = max.wrapping_sub(min);
        let width = int.width();
        self.begin_present();
        let Scratch {
            values, dict, page, ..
        } = &mut *self.scratch;
        let n = values.len();
        let signed = |v| int.signed(v);
        if n > 0 && int.deltas_fit(max) && delta_wins(values, range, width, signed) {
            delta_pack(page, values, signed);
            return self.finish(Values::Delta, None);
        }
        if values.is_empty() || range >= MAX_RANGE || range as usize >= values.len() {
            page.reserve(values.len() * width);
            for &v in values.iter() {
                page.extend_from_slice(&int.physical(v).to_le_bytes()[..width]);
            }
            return self.finish(Values::Plain, None);
        }
        dict.clear();
        for i in 0..=range {
            dict.extend_from_slice(&int.physical(min + i).to_le_bytes()[..width]);
        }
        let bits = u64::BITS - range.leading_zeros();
        page.push(bits as u8);
        if bits == 0 {
            // One value: a run of zero-bit keys, as Polars' encoder writes it.
            hybrid_rle::encode::<u32, _, _>(page, values.iter().map(|_| 0), 0)?;
        } else {
            for v in values.iter_mut() {
                *v -= min;
            }
            bit_pack(page, values, bits);
        }
        let dict = std::mem::take(&mut self.scratch.dict);
        let done = self.finish(Values::Dictionary, Some((&dict, range as usize + 1)));
        self.scratch.dict = dict;
        done
    }

    /// A boolean column: bit-packed, first row in the lowest bit.
    pub(crate) fn bool(&mut self, get: impl Fn(&Row) -> bool) -> PolarsResult<()> {
        self.begin_present();
        let units = self.units;
        let page = &mut self.scratch.page;
        page.reserve(self.rows.div_ceil(8));
        let (mut bits, mut filled) = (0u64, 0usize);
        for unit in units {
            for r in unit.rows() {
                bits |= u64::from(get(r)) << filled;
                filled += 1;
                if filled == 64 {
                    page.extend_from_slice(&bits.to_le_bytes());
                    (bits, filled) = (0, 0);
                }
            }
        }
        page.extend_from_slice(&bits.to_le_bytes()[..filled.div_ceil(8)]);
        self.finish(Values::Plain, None)
    }

    /// An enum column: codes into `dict`'s categories.
    pub(crate) fn codes(
        &mut self,
        dict: impl Fn(&PartSchema) -> &Dictionary,
        get: impl Fn(&Row) -> u32,
    ) -> PolarsResult<()> {
        self.begin_present();
        let schema = self.schema;
        let dict = dict(schema);
        let bits = u64::BITS - (dict.len.saturating_sub(1) as u64).leading_zeros();
        self.scratch.page.push(bits as u8);
        let keys = self.units.iter().flat_map(|r| r.rows().iter()).map(get);
        hybrid_rle::encode::<u32, _, _>(&mut self.scratch.page, keys, bits)?;
        self.finish(Values::Dictionary, Some((&dict.page, dict.len)))
    }

    /// A nullable `u64` column: levels say which rows have a value, PLAIN values follow.
    pub(crate) fn optional_u64(&mut self, get: impl Fn(&Row) -> Option<u64>) -> PolarsResult<()> {
        let page = &mut self.scratch.page;
        page.clear();
        page.extend_from_slice(&[0; 4]);
        let units = self.units;
        let rows = || units.iter().flat_map(|r| r.rows().iter());
        hybrid_rle::encode::<bool, _, _>(page, rows().map(|r| get(r).is_some()), 1)?;
        let levels = (page.len() - 4) as u32;
        page[..4].copy_from_slice(&levels.to_le_bytes());
        for v in rows().filter_map(&get) {
            page.extend_from_slice(&v.to_le_bytes());
        }
        self.finish(Values::Plain, None)
    }
}

/// The physical type of an integer column.
#[derive(Clone, Copy)]
enum Int {
    /// INT32, unsigned.
    U32,
    /// INT64, unsigned.
    U64,
    /// INT64, signed: handled with the sign bit flipped ([`I64_FLIP`]).
    I64,
}

/// Flips an `i64`'s sign bit: the signed order of the values becomes their unsigned order.
const I64_FLIP: u64 = 1 << 63;

/// The widest range of values an integer column's dictionary covers (see [`RowGroup::int`]).
const MAX_RANGE: u64 = 1 << 16;

impl Int {
    /// Bytes of a PLAIN value.
    fn width(self) -> usize {
        match self {
            Int::U32 => 4,
            Int::U64 | Int::I64 => 8,
        }
    }

    /// The bits of a value as stored (the low `width` bytes, little-endian).
    fn physical(self, v: u64) -> u64 {
        match self {
            Int::I64 => v ^ I64_FLIP,
            Int::U32 | Int::U64 => v,
        }
    }

    /// Whether the deltas of values up to `max` fit the physical type, as readers of
    /// DELTA_BINARY_PACKED require (pyarrow refuses an INT32 miniblock wider than 32 bits):
    /// for an INT32, values below 2^31 (no record column comes near), else no delta.
    fn deltas_fit(self, max: u64) -> bool {
        match self {
            Int::U32 => max < 1 << 31,
            Int::U64 | Int::I64 => true,
        }
    }

    /// The value as the signed integer of its physical type, which DELTA_BINARY_PACKED
    /// takes differences of (an INT32 is sign-extended, as readers decode it).
    fn signed(self, v: u64) -> i64 {
        match self {
            Int::U32 => i64::from(v as u32 as i32),
            Int::U64 | Int::I64 => self.physical(v) as i64,
        }
    }
}

/// Deltas per block of a DELTA_BINARY_PACKED page, and per miniblock (bit-packed at a width
/// of its own: a fall in a sorted-by-part column widens one miniblock, not its block).
const DELTA_BLOCK: usize = 256;
const DELTA_MINIBLOCK: usize = 64;

/// The values of an integer column from which [`delta_wins`] estimates its delta page.
const DELTA_SAMPLE: usize = 4096;

/// `values` (at least one; as the signed integers `signed` makes of them) as a
/// DELTA_BINARY_PACKED page body: the header (block size, miniblocks per block, count, first
/// value), then each block's smallest delta, its miniblocks' widths, and the miniblocks (the
/// deltas less the smallest, bit-packed; the last padded with zeros). polars-parquet's own
/// encoder is not public; its bit-packing and LEB128 codes are, and are used here.
fn delta_pack(page: &mut Vec<u8>, values: &[u64], signed: impl Fn(u64) -> i64) {
    const MINIBLOCKS: usize = DELTA_BLOCK / DELTA_MINIBLOCK;
    let mut buf = [0u8; 10];
    for x in [DELTA_BLOCK, MINIBLOCKS, values.len()] {
        let used = uleb128::encode(x as u64, &mut buf);
        page.extend_from_slice(&buf[..used]);
    }
    let mut prev = signed(values[0]);
    let zigzag = |page: &mut Vec<u8>, x: i64| {
        let (buf, used) = zigzag_leb128::encode(x);
        page.extend_from_slice(&buf[..used]);
    };
    zigzag(page, prev);
    let mut deltas = [0i64; DELTA_BLOCK];
    let mut packed = [0u64; DELTA_BLOCK];
    for block in values[1..].chunks(DELTA_BLOCK) {
        let mut min = i64::MAX;
        for (d, &v) in deltas.iter_mut().zip(block) {
            let x = signed(v);
            *d = x.wrapping_sub(prev);
            min = min.min(*d);
            prev = x;
        }
        zigzag(page, min);
        packed.fill(0);
        for (p, &d) in packed.iter_mut().zip(&deltas[..block.len()]) {
            *p = d.wrapping_sub(min) as u64;
        }
        let used = block.len().div_ceil(DELTA_MINIBLOCK);
        let mut widths = [0u8; MINIBLOCKS];
        for (w, mini) in widths
            .iter_mut()
            .zip(packed.chunks(DELTA_MINIBLOCK))
            .take(used)
        {
            let all = mini.iter().fold(0, |acc, &p| acc | p);
            *w = (u64::BITS - all.leading_zeros()) as u8;
        }
        page.extend_from_slice(&widths);
        for (&w, mini) in widths.iter().zip(packed.chunks(DELTA_MINIBLOCK)).take(used) {
            let start = page.len();
            page.resize(start + DELTA_MINIBLOCK * usize::from(w) / 8, 0);
            if w > 0 {
                bitpacked::encode(mini, usize::from(w), &mut page[start..]);
            }
        }
    }
}

/// Whether DELTA_BINARY_PACKED clearly beats the dictionary (or PLAIN) for `values`, of this
/// `range` and PLAIN `width`: the delta page's size estimated from the first
/// [`DELTA_SAMPLE`] values (the choice weighs sizes only: any values decode either way), each
/// miniblock at the width of its deltas' spread. Sorted columns win (the deal and the round
/// numbers within a part: one or two bits a row, where the dictionary needs the range's).
fn delta_wins(values: &[u64], range: u64, width: usize, signed: impl Fn(u64) -> i64) -> bool {
    let bits = |x: u64| (u64::BITS - x.leading_zeros()) as usize;
    let n = values.len();
    let head = &values[..n.min(DELTA_SAMPLE)];
    let mut prev = signed(head[0]);
    let mut sampled = 0;
    for mini in head[1..].chunks(DELTA_MINIBLOCK) {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for &v in mini {
            let x = signed(v);
            let d = x.wrapping_sub(prev);
            (lo, hi, prev) = (lo.min(d), hi.max(d), x);
        }
        sampled += DELTA_MINIBLOCK * bits(hi.wrapping_sub(lo) as u64) / 8 + 1;
    }
    let delta = sampled * n / head.len();
    let other = if range < MAX_RANGE && (range as usize) < n {
        (range as usize + 1) * width + n * bits(range) / 8
    } else {
        n * width
    };
    // Only a clear win: small deltas compress less well than the same data as keys.
    delta * 2 < other
}

/// `keys` of `bits` bits (1 to 16) as one bit-packed run of the RLE/bit-packing hybrid:
/// groups of eight values, the first in the lowest bits, the last group padded with zeros
/// (polars-parquet's packing, 64 keys at a time).
fn bit_pack(page: &mut Vec<u8>, keys: &[u64], bits: u32) {
    let groups = keys.len().div_ceil(8);
    let mut header = [0u8; 10];
    let used = uleb128::encode(((groups as u64) << 1) | 1, &mut header);
    page.extend_from_slice(&header[..used]);
    let start = page.len();
    // Whole packs of 64 keys, as `bitpacked::encode` writes them; the run ends at its last
    // group of eight.
    page.resize(start + keys.len().div_ceil(64) * 8 * bits as usize, 0);
    bitpacked::encode(keys, bits as usize, &mut page[start..]);
    page.truncate(start + groups * bits as usize);
}

/// `src` compressed by `zstd` (through `packed`, kept for the next page), in a buffer of its own.
fn compress(
    zstd: &mut zstd::bulk::Compressor<'static>,
    packed: &mut Vec<u8>,
    src: &[u8],
) -> std::io::Result<Vec<u8>> {
    packed.clear();
    packed.reserve(zstd::zstd_safe::compress_bound(src.len()));
    zstd.compress_to_buffer(src, packed)?;
    Ok(packed.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::sample;
    use polars_core::prelude::DataType;
    use polars_io::prelude::{ParquetReader, ParquetWriter, SerReader};

    fn written(chunk: &[Records], cats: &Categories) -> Vec<u8> {
        let schema = PartSchema::new(cats).unwrap();
        let meta = KeyValue {
            key: "dhumbal-run".into(),
            value: Some("{}".into()),
        };
        let mut file = Vec::new();
        write(&mut file, chunk, &schema, meta).unwrap();
        file
    }

    /// Sorted and steadily falling columns are delta-encoded; a column cycling through a few
    /// values (the seat) keeps its dictionary, one of wide jumps (coins of both signs) PLAIN.
    /// Each kind reads back in [`a_part_reads_back_as_the_frame`]'s sample (a rising deal,
    /// round and turn count, a falling standing, wide coin deltas).
    #[test]
    fn sorted_columns_are_delta_encoded() {
        let wins = |values: &[u64], int: Int| {
            let (min, max) = values
                .iter()
                .fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            delta_wins(values, max - min, int.width(), |v| int.signed(v))
        };
        let deal: Vec<u64> = (0..100_000).map(|i| 5_000 + i / 4).collect();
        assert!(wins(&deal, Int::U64));
        let round: Vec<u64> = (0..100_000).map(|i| (i / 4) % 1024).collect();
        assert!(wins(&round, Int::U32));
        let falling: Vec<u64> = (0..100_000)
            .map(|i| u64::from(i32::MAX as u32) - i)
            .collect();
        assert!(wins(&falling, Int::U32));
        // INT32 values from 2^31 up: their sign-extended deltas would need miniblocks wider
        // than 32 bits, which readers refuse.
        assert!(!Int::U32.deltas_fit(1 << 31) && Int::U32.deltas_fit((1 << 31) - 1));
        let seat: Vec<u64> = (0..100_000).map(|i| i % 4).collect();
        assert!(!wins(&seat, Int::U32));
        let coins: Vec<u64> = (0..100_000u64)
            .map(|k| {
                (if k % 2 == 0 {
                    -(k as i64)
                } else {
                    i64::MIN + k as i64
                }) as u64
                    ^ I64_FLIP
            })
            .collect();
        assert!(!wins(&coins, Int::I64));
    }

    /// A part reads back in Polars as the record frame, with the same types (enum columns as
    /// `Enum`s of the stage's categories) as the file Polars' own writer makes of it, in one
    /// row group and in several (units kept whole, one larger than a row group alone), and
    /// with awkward names; units without rows add no row group.
    #[test]
    fn a_part_reads_back_as_the_frame() {
        let ids = ["x", "say \"hi\"", "two\nlines"].map(String::from);
        let cats = Categories::new("a,b", &ids).unwrap();
        let empty = || vec![Records::default(); 2];
        let mut mixed = empty();
        mixed.extend(sample(2, 10));
        mixed.extend(empty());
        let cases = [
            (sample(1, 1), 1),
            // Every column delta-encoded (a page this small is smallest so; but the INT32
            // hand values, from 2^31 up), the coins' delta from 0 to near i64::MIN, the
            // standings' negative.
            (sample(1, 2), 1),
            (sample(2, 2), 1),
            (sample(3, 200), 1),
            (sample(3, 100_000), 2),
            (sample(1, 300_000), 1),
            (empty(), 0),
            (mixed, 1),
        ];
        for (chunk, groups) in cases {
            let file = written(&chunk, &cats);
            let back = ParquetReader::new(std::io::Cursor::new(file.clone()))
                .finish()
                .unwrap();
            let mut expected = crate::records::frame(&chunk, &cats).unwrap();
            assert!(back.equals_missing(&expected), "{back}\n{expected}");
            let mut polars = Vec::new();
            ParquetWriter::new(&mut polars)
                .finish(&mut expected)
                .unwrap();
            let theirs = ParquetReader::new(std::io::Cursor::new(polars))
                .finish()
                .unwrap();
            assert_eq!(back.schema(), theirs.schema());
            assert!(matches!(
                back.column("agent").unwrap().dtype(),
                DataType::Enum(..)
            ));
            let mut reader = ParquetReader::new(std::io::Cursor::new(file));
            let metadata = reader.get_metadata().unwrap();
            assert_eq!(metadata.row_groups.len(), groups);
        }
    }
}
