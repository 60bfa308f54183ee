//! The few CoreFoundation calls `hangs` needs, declared by hand (public API, linked from
//! CoreFoundation.framework; signatures from `CFBase.h`, `CFArray.h`, `CFDictionary.h`,
//! `CFString.h`, `CFNumber.h`), with an owning wrapper that releases what a Copy/Create
//! call returned. macOS only.
//!
//! Values read out of a container are borrowed (the CF "Get rule"); they are only used
//! while the owning `Owned` is alive, and every read checks the value's type id first, so a
//! key holding an unexpected type reads as absent rather than being misinterpreted.

use std::ffi::{c_char, c_void};
use std::ptr::NonNull;

use crate::macos::apps_ffi::{CF_NUMBER_SINT64_TYPE, CF_STRING_ENCODING_UTF8};

pub(super) type CfTypeRef = *const c_void;
type CfIndex = isize;
type CfTypeId = usize;

#[link(name = "CoreFoundation", kind = "framework")]
unsafe extern "C" {
    fn CFRelease(cf: CfTypeRef);
    fn CFGetTypeID(cf: CfTypeRef) -> CfTypeId;
    fn CFStringGetTypeID() -> CfTypeId;
    fn CFNumberGetTypeID() -> CfTypeId;
    fn CFArrayGetTypeID() -> CfTypeId;
    fn CFDictionaryGetTypeID() -> CfTypeId;
    fn CFArrayGetCount(array: CfTypeRef) -> CfIndex;
    fn CFArrayGetValueAtIndex(array: CfTypeRef, idx: CfIndex) -> CfTypeRef;
    fn CFDictionaryGetValue(dict: CfTypeRef, key: CfTypeRef) -> CfTypeRef;
    fn CFStringCreateWithBytes(
        alloc: CfTypeRef,
        bytes: *const u8,
        len: CfIndex,
        encoding: u32,
        is_external_representation: u8,
    ) -> CfTypeRef;
    fn CFStringGetLength(s: CfTypeRef) -> CfIndex;
    fn CFStringGetMaximumSizeForEncoding(length: CfIndex, encoding: u32) -> CfIndex;
    fn CFStringGetCString(s: CfTypeRef, buf: *mut c_char, size: CfIndex, encoding: u32) -> u8;
    fn CFNumberGetValue(n: CfTypeRef, the_type: CfIndex, value: *mut c_void) -> u8;
}

/// A CoreFoundation object this code owns (+1), released on drop.
#[derive(Debug)]
pub(super) struct Owned(NonNull<c_void>);

impl Owned {
    /// Take ownership of the result of a Copy/Create call; `None` for NULL.
    ///
    /// # Safety
    /// `ptr` must be NULL or a CoreFoundation object returned with a +1 reference that
    /// nothing else will release.
    pub(super) unsafe fn from_create(ptr: CfTypeRef) -> Option<Self> {
        NonNull::new(ptr.cast_mut()).map(Self)
    }

    pub(super) fn as_ptr(&self) -> CfTypeRef {
        self.0.as_ptr().cast_const()
    }

    fn is(&self, type_id: CfTypeId) -> bool {
        // SAFETY: self holds a live CF object.
        unsafe { CFGetTypeID(self.as_ptr()) == type_id }
    }

    /// The elements of an array (borrowed from it), or nothing when it is not an array.
    pub(super) fn array_items(&self) -> Vec<Borrowed<'_>> {
        // SAFETY: CFArrayGetTypeID has no preconditions.
        if !self.is(unsafe { CFArrayGetTypeID() }) {
            return Vec::new();
        }
        // SAFETY: self is a live CFArray.
        let n = unsafe { CFArrayGetCount(self.as_ptr()) }.max(0);
        let mut items = Vec::with_capacity(n as usize);
        for i in 0..n {
            // SAFETY: 0 <= i < count; the value is borrowed from the array, which outlives
            // the returned `Borrowed`.
            let v = unsafe { CFArrayGetValueAtIndex(self.as_ptr(), i) };
            items.extend(Borrowed::new(v));
        }
        items
    }

    /// The value of `key` in a dictionary (borrowed), `None` when absent or not a
    /// dictionary.
    pub(super) fn dict_get(&self, key: &Owned) -> Option<Borrowed<'_>> {
        // SAFETY: CFDictionaryGetTypeID has no preconditions.
        if !self.is(unsafe { CFDictionaryGetTypeID() }) {
            return None;
        }
        // SAFETY: self is a live CFDictionary and key a live CFString.
        Borrowed::new(unsafe { CFDictionaryGetValue(self.as_ptr(), key.as_ptr()) })
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: we own exactly one reference (from_create's contract).
        unsafe { CFRelease(self.as_ptr()) }
    }
}

/// A CoreFoundation object borrowed from a container that outlives `'a`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Borrowed<'a> {
    ptr: NonNull<c_void>,
    _owner: std::marker::PhantomData<&'a Owned>,
}

impl Borrowed<'_> {
    fn new(ptr: CfTypeRef) -> Option<Self> {
        NonNull::new(ptr.cast_mut()).map(|ptr| Self {
            ptr,
            _owner: std::marker::PhantomData,
        })
    }

    pub(super) fn as_ptr(&self) -> CfTypeRef {
        self.ptr.as_ptr().cast_const()
    }

    /// The value as a Rust string, `None` unless it is a CFString convertible to UTF-8.
    pub(super) fn string(&self) -> Option<String> {
        // SAFETY: the object is live (borrowed from a live container); the type id
        // functions have no preconditions.
        if unsafe { CFGetTypeID(self.as_ptr()) != CFStringGetTypeID() } {
            return None;
        }
        // SAFETY: a live CFString.
        let len = unsafe { CFStringGetLength(self.as_ptr()) };
        // SAFETY: no preconditions.
        let max = unsafe { CFStringGetMaximumSizeForEncoding(len, CF_STRING_ENCODING_UTF8) };
        let cap = usize::try_from(max).ok()?.checked_add(1)?;
        let mut buf = vec![0u8; cap];
        // SAFETY: buf is writable for `cap` bytes and `cap` is passed as its size.
        let ok = unsafe {
            CFStringGetCString(
                self.as_ptr(),
                buf.as_mut_ptr().cast::<c_char>(),
                cap as CfIndex,
                CF_STRING_ENCODING_UTF8,
            )
        };
        if ok == 0 {
            return None;
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        String::from_utf8(buf).ok()
    }

    /// The value as an integer, `None` unless it is a CFNumber.
    pub(super) fn i64(&self) -> Option<i64> {
        // SAFETY: as in `string`.
        if unsafe { CFGetTypeID(self.as_ptr()) != CFNumberGetTypeID() } {
            return None;
        }
        let mut v: i64 = 0;
        // SAFETY: a live CFNumber; `v` is 8 writable bytes, the size of kCFNumberSInt64Type.
        let ok = unsafe {
            CFNumberGetValue(
                self.as_ptr(),
                CF_NUMBER_SINT64_TYPE,
                (&mut v as *mut i64).cast::<c_void>(),
            )
        };
        (ok != 0).then_some(v)
    }
}

/// A new CFString holding `s`.
pub(super) fn string(s: &str) -> Option<Owned> {
    // SAFETY: the bytes are valid for `len`; NULL allocator = the default allocator; the
    // result is a +1 reference (Create rule) or NULL.
    unsafe {
        Owned::from_create(CFStringCreateWithBytes(
            std::ptr::null(),
            s.as_ptr(),
            s.len() as CfIndex,
            CF_STRING_ENCODING_UTF8,
            0,
        ))
    }
}
