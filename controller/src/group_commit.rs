//! Group commit for the store's flushes. Every write that must survive a crash is flushed
//! before it is acknowledged, and a flush (an fsync) costs the same for one write as for a
//! hundred: writers that arrive while a flush runs share the next one, so under load the
//! store makes one flush per batch instead of one per writer.

use std::future::Future;
use std::sync::Mutex;

use tokio::sync::watch;

/// How far the flushes have come: writes up to `flushed` are durable; `failed` is the error of
/// the last batch, up to the ticket it covered.
#[derive(Clone, Debug, Default)]
struct Progress {
    flushed: u64,
    failed: Option<(u64, String)>,
}

#[derive(Debug, Default)]
struct Tickets {
    /// The ticket of the newest writer that asked for a flush.
    issued: u64,
    /// A flush is under way.
    running: bool,
}

/// Shares flushes among the writers waiting for one.
#[derive(Debug)]
pub struct GroupCommit {
    tickets: Mutex<Tickets>,
    progress: watch::Sender<Progress>,
}

impl Default for GroupCommit {
    fn default() -> Self {
        Self {
            tickets: Mutex::default(),
            progress: watch::Sender::new(Progress::default()),
        }
    }
}

impl GroupCommit {
    /// Returns once a flush that began after this call has succeeded: the caller's writes,
    /// made before it, are durable. `flush` makes every write so far durable; one runs at a
    /// time, and a writer arriving while one runs waits for the next, which it shares.
    pub async fn flush<F, Fut>(&self, flush: F) -> Result<(), String>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<(), String>>,
    {
        let mut progress = self.progress.subscribe();
        let ticket = {
            let mut tickets = self.tickets.lock().unwrap();
            tickets.issued += 1;
            tickets.issued
        };
        loop {
            {
                let state = progress.borrow_and_update();
                if let Some((covered, error)) = &state.failed
                    && *covered >= ticket
                    && state.flushed < ticket
                {
                    return Err(error.clone());
                }
                if state.flushed >= ticket {
                    return Ok(());
                }
            }
            let batch = {
                let mut tickets = self.tickets.lock().unwrap();
                if tickets.running {
                    None
                } else {
                    tickets.running = true;
                    Some(tickets.issued)
                }
            };
            match batch {
                // Somebody's flush is under way: it may not cover this write; the next will.
                None => {
                    if progress.changed().await.is_err() {
                        return Err("the store closed".into());
                    }
                }
                Some(covers) => {
                    let outcome = flush().await;
                    self.tickets.lock().unwrap().running = false;
                    self.progress.send_modify(|state| match &outcome {
                        Ok(()) => state.flushed = state.flushed.max(covers),
                        Err(error) => state.failed = Some((covers, error.clone())),
                    });
                    return outcome;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn writers_that_arrive_during_a_flush_share_the_next_one() {
        let commits = Arc::new(GroupCommit::default());
        let flushes = Arc::new(AtomicU32::new(0));
        let (release, released) = watch::channel(false);
        let flush = {
            let flushes = flushes.clone();
            move || {
                let flushes = flushes.clone();
                let mut released = released.clone();
                async move {
                    flushes.fetch_add(1, Ordering::SeqCst);
                    released.wait_for(|open| *open).await.unwrap();
                    Ok(())
                }
            }
        };
        let first = tokio::spawn({
            let (commits, flush) = (commits.clone(), flush.clone());
            async move { commits.flush(flush).await }
        });
        // The first flush is under way before the others arrive.
        while flushes.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        let others: Vec<_> = (0..50)
            .map(|_| {
                let (commits, flush) = (commits.clone(), flush.clone());
                tokio::spawn(async move { commits.flush(flush).await })
            })
            .collect();
        while commits.tickets.lock().unwrap().issued < 51 {
            tokio::task::yield_now().await;
        }
        release.send(true).unwrap();
        first.await.unwrap().unwrap();
        for other in others {
            other.await.unwrap().unwrap();
        }
        assert_eq!(
            flushes.load(Ordering::SeqCst),
            2,
            "one flush, then one for all the rest"
        );
    }

    #[tokio::test]
    async fn a_writer_is_told_when_the_flush_covering_it_failed() {
        let commits = GroupCommit::default();
        let failed = commits
            .flush(|| async { Err("disk full".to_string()) })
            .await;
        assert_eq!(failed, Err("disk full".into()));
        // The next write gets a flush of its own.
        commits.flush(|| async { Ok(()) }).await.unwrap();
        let slow = commits.flush(|| async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok(())
        });
        slow.await.unwrap();
    }
}
