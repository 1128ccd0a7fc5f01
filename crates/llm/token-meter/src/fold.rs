//! One session's incremental fold (dsh's `ReplayState` and `_foldEvent`): the latest request
//! header, the priced surface, the open step, and the anchor set by every
//! `assistant/message`. Each event is folded once; a measurement after N new events costs
//! O(N), never a rescan of the log.

use std::collections::HashSet;
use std::sync::Arc;

use dsh_llm::{BlockAssembler, TokenUsage};
use dsh_protocol::kinds;
use dsh_session::SessionEvent;
use dsh_session::vocab::{CoreEvent, VocabError};
use serde::Deserialize;
use serde_json::Value;

use crate::error::MeterError;
use crate::estimate::{ROLE_OVERHEAD, estimate_content};
use crate::header::{PricedHeader, same_header};
use crate::measurement::{Baseline, TokenMeasurement};
use crate::surface::{PricedSurface, TokenSurfaceNode};

/// The open step and the surface price when it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StepStart {
    turn: u64,
    step: u64,
    /// Taken at `step/start`, before the loop appends the step's claimed user messages: those
    /// count in the delta on top of the provider's usage (dsh's conservative overcount).
    surface_tokens: u64,
}

/// What the last `assistant/message` anchored: the header it was sent under, the surface it
/// priced, and the baseline.
#[derive(Debug, Clone, PartialEq)]
struct Anchor {
    header: Option<Arc<PricedHeader>>,
    surface_tokens: u64,
    baseline: Baseline,
}

/// The fields of `assistant/message` the anchor reads.
#[derive(Deserialize)]
struct ReplyData {
    turn: u64,
    step: u64,
    #[serde(default)]
    usage: Option<TokenUsage>,
}

/// One session's token fold. Feed it the log with [`SessionMeter::sync`] (only the events
/// it has not seen are read), then [`SessionMeter::measure`].
#[derive(Debug, Clone, Default)]
pub struct SessionMeter {
    consumed: u64,
    header: Option<Arc<PricedHeader>>,
    surface: PricedSurface,
    step: Option<StepStart>,
    anchor: Option<Anchor>,
}

/// `input + cacheRead + cacheWrite + output`; reasoning is part of output and not added.
fn usage_tokens(usage: &TokenUsage) -> u64 {
    usage
        .input_tokens
        .saturating_add(usage.cache_read_tokens.unwrap_or(0))
        .saturating_add(usage.cache_write_tokens.unwrap_or(0))
        .saturating_add(usage.output_tokens)
}

fn signed(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

fn shape_error(event: &SessionEvent, source: serde_json::Error) -> MeterError {
    MeterError::Shape(VocabError {
        seq: event.seq,
        kind: event.kind.to_string(),
        source,
    })
}

/// `(turn, step)` of a `step/start` or `step/end`.
fn step_of(event: &SessionEvent) -> Result<Option<(u64, u64)>, MeterError> {
    match CoreEvent::read(event).transpose()? {
        Some(CoreEvent::StepStart { turn, step } | CoreEvent::StepEnd { turn, step }) => {
            Ok(Some((turn, step)))
        }
        _ => Ok(None),
    }
}

impl SessionMeter {
    /// A meter that has read nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Events consumed so far: the next seq to read.
    pub fn log_revision(&self) -> u64 {
        self.consumed
    }

    /// The latest logged request header, canonical and priced.
    pub fn header(&self) -> Option<&PricedHeader> {
        self.header.as_deref()
    }

    /// The current surface, priced, head to tail.
    pub fn nodes(&self) -> &[TokenSurfaceNode] {
        self.surface.nodes()
    }

    /// The price of the current surface.
    pub fn surface_tokens(&self) -> u64 {
        self.surface.tokens()
    }

    /// Folds the events of `events` (the whole log, seq = index) not read yet. On an event
    /// it cannot fold it stops there and returns the error; that event stays unread, so the
    /// next call fails the same way.
    pub fn sync<E: AsRef<SessionEvent>>(&mut self, events: &[E]) -> Result<(), MeterError> {
        let start = usize::try_from(self.consumed).unwrap_or(usize::MAX);
        for event in events.get(start..).unwrap_or_default() {
            self.fold(events, event.as_ref())?;
            self.consumed += 1;
        }
        Ok(())
    }

    /// Plans every fallible part first, then commits, so a refused event changes nothing.
    fn fold<E: AsRef<SessionEvent>>(
        &mut self,
        events: &[E],
        event: &SessionEvent,
    ) -> Result<(), MeterError> {
        let mut header = self.header.clone();
        let mut step = self.step;
        match event.kind.as_ref() {
            kinds::REQUEST_HEADER => {
                let logged = event.data.get("header").unwrap_or(&Value::Null);
                header = Some(Arc::new(PricedHeader::new(logged)));
            }
            kinds::STEP_START => {
                if let Some(open) = self.step {
                    return Err(MeterError::StepStillOpen {
                        seq: event.seq,
                        turn: open.turn,
                        step: open.step,
                    });
                }
                step = step_of(event)?.map(|(turn, number)| StepStart {
                    turn,
                    step: number,
                    surface_tokens: self.surface.tokens(),
                });
            }
            kinds::STEP_END => {
                let closes = step_of(event)?;
                if closes.is_none() || self.step.map(|open| (open.turn, open.step)) != closes {
                    return Err(MeterError::UnmatchedStepEnd { seq: event.seq });
                }
                step = None;
            }
            _ => {}
        }
        let change = self.surface.plan(event)?;
        let anchor = if event.kind == kinds::ASSISTANT_MESSAGE {
            let message_tokens = change.map_or(0, |change| change.node.tokens);
            Some(self.anchor_at(events, event, header.as_ref(), message_tokens)?)
        } else {
            None
        };
        self.header = header;
        self.step = step;
        if let Some(change) = change {
            self.surface.apply(change);
        }
        if let Some(anchor) = anchor {
            self.anchor = Some(anchor);
        }
        Ok(())
    }

    /// The anchor an `assistant/message` sets (dsh's rule, at every reply, content or not).
    fn anchor_at<E: AsRef<SessionEvent>>(
        &self,
        events: &[E],
        event: &SessionEvent,
        header: Option<&Arc<PricedHeader>>,
        message_tokens: u64,
    ) -> Result<Anchor, MeterError> {
        let reply =
            ReplyData::deserialize(event.data.value()).map_err(|e| shape_error(event, e))?;
        let stepped = self
            .step
            .filter(|open| open.turn == reply.turn && open.step == reply.step);
        let Some(open) = stepped else {
            return Err(MeterError::UnmatchedMessage { seq: event.seq });
        };
        let header_tokens = header.map_or(0, |header| header.tokens());
        if let (Some(usage), Some(_)) = (reply.usage, header) {
            let provider_assistant =
                provider_assistant_tokens(events, event, &reply, message_tokens)?;
            let surface_tokens = open.surface_tokens + provider_assistant;
            let provider = usage_tokens(&usage);
            let estimated = header_tokens + surface_tokens;
            // A signed heuristic delta stays conservative only from an anchor at least as
            // large as the full heuristic price of the same request.
            let baseline = if provider >= estimated {
                Baseline::Usage {
                    tokens: provider,
                    usage,
                }
            } else {
                Baseline::Estimated { tokens: estimated }
            };
            return Ok(Anchor {
                header: header.cloned(),
                surface_tokens,
                baseline,
            });
        }
        let surface_tokens = open.surface_tokens + message_tokens;
        Ok(Anchor {
            header: header.cloned(),
            surface_tokens,
            baseline: Baseline::Estimated {
                tokens: header_tokens + surface_tokens,
            },
        })
    }

    /// The estimate of the next request under `request_header` (the latest logged header
    /// when `None`), through the events synced so far (dsh's `measure`).
    ///
    /// The last anchor is reused when its header is the same envelope: its baseline plus the
    /// signed change of the surface since. Otherwise header and surface are priced whole
    /// (any header change: tools, system, model, call config); with no header and an empty
    /// surface there is nothing to price.
    pub fn measure(&self, request_header: Option<&PricedHeader>) -> TokenMeasurement {
        let header = request_header.or(self.header.as_deref());
        let surface_tokens = self.surface.tokens();
        let (baseline, surface_delta_tokens) = match &self.anchor {
            Some(anchor) if same_header(anchor.header.as_deref(), header) => (
                anchor.baseline,
                signed(surface_tokens) - signed(anchor.surface_tokens),
            ),
            _ if header.is_none() && surface_tokens == 0 => (Baseline::None, 0),
            _ => (
                Baseline::Estimated {
                    tokens: header.map_or(0, PricedHeader::tokens) + surface_tokens,
                },
                0,
            ),
        };
        let total = signed(baseline.tokens()).saturating_add(surface_delta_tokens);
        TokenMeasurement {
            log_revision: self.consumed,
            baseline,
            surface_delta_tokens,
            total_tokens: u64::try_from(total.max(0)).unwrap_or(0),
            surface_tokens,
        }
    }
}

/// The price of what the provider produced, reassembled from the chunks the reply cites.
/// No list prices the durable message instead (older logs); an empty list is an empty
/// stream, priced 0.
fn provider_assistant_tokens<E: AsRef<SessionEvent>>(
    events: &[E],
    event: &SessionEvent,
    reply: &ReplyData,
    message_tokens: u64,
) -> Result<u64, MeterError> {
    let Some(sources) = &event.source_event_seqs else {
        return Ok(message_tokens);
    };
    let seq = event.seq;
    let mut assembler = BlockAssembler::new();
    let mut seen = HashSet::with_capacity(sources.len());
    for &source_seq in sources {
        if source_seq >= seq {
            return Err(MeterError::SourceNotEarlier { seq, source_seq });
        }
        if !seen.insert(source_seq) {
            return Err(MeterError::SourceRepeated { seq, source_seq });
        }
        let source = usize::try_from(source_seq)
            .ok()
            .and_then(|index| events.get(index))
            .map(AsRef::as_ref)
            .filter(|source| source.kind == kinds::ASSISTANT_CHUNK);
        let chunk = source.and_then(CoreEvent::read).transpose()?;
        let Some(CoreEvent::AssistantChunk { turn, step, chunk }) = chunk else {
            return Err(MeterError::SourceNotChunk { seq, source_seq });
        };
        if turn != reply.turn || step != reply.step {
            return Err(MeterError::SourceOtherStep { seq, source_seq });
        }
        assembler.push(&chunk);
    }
    let blocks = assembler
        .blocks()
        .map_err(|source| MeterError::Assemble { seq, source })?;
    Ok(if blocks.is_empty() {
        0
    } else {
        estimate_content(&blocks) + ROLE_OVERHEAD
    })
}
