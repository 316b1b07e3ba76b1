//! The recovery modes (by id, continue the most recent, fork, resume at an event) and the async
//! `SessionStore` behind the `SessionBackend` trait the agent loop uses.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "test code: a panic is a failure report"
)]

use std::time::Duration;

use agent_core::events::{AssistantMessage, Event, EventId, EventPayload, UserMessage};
use agent_store::recovery::{ResumeOptions, most_recent, pick_session, resume};
use agent_store::{
    Content, ExportFormat, ForkAt, ForkOptions, ListQuery, LoadRange, NewSession, SessionBackend,
    SessionId, SessionMetadata, SessionStore, StoreError, StoreOptions,
};
use pretty_assertions::assert_eq;

fn user(text: &str) -> Event {
    Event::new(
        0,
        None,
        EventPayload::UserMessage(UserMessage { text: text.into() }),
    )
}

fn assistant(text: &str) -> Event {
    Event::new(
        0,
        None,
        EventPayload::AssistantMessage(AssistantMessage::text(text)),
    )
}

fn texts(messages: &[agent_store::TranscriptMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match &m.content {
            Content::Text { text } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// A session in `cwd` holding the exchange `prompts[i]` → `reply i`, closed afterwards (as a
/// finished run leaves it).
async fn session(store: &SessionStore, cwd: &str, prompts: &[&str]) -> SessionMetadata {
    let meta = store
        .create(NewSession {
            cwd: Some(cwd.into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    for (i, p) in prompts.iter().enumerate() {
        store
            .append(&meta.id, vec![user(p), assistant(&format!("reply {i}"))])
            .await
            .unwrap();
    }
    store.close(&meta.id).await.unwrap();
    // Timestamps have microsecond precision; keep the order of creation unambiguous.
    tokio::time::sleep(Duration::from_millis(2)).await;
    store.metadata(&meta.id).await.unwrap()
}

async fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(StoreOptions::new(dir.path().join("sessions")))
        .await
        .unwrap();
    (dir, store)
}

#[tokio::test]
async fn resume_by_id_continues_the_same_session_with_its_conversation() {
    let (_dir, store) = store().await;
    let a = session(&store, "/p", &["one", "two"]).await;
    let _b = session(&store, "/p", &["other"]).await;
    let options = ResumeOptions {
        session_id: Some(a.id.clone()),
        ..ResumeOptions::default()
    };
    let r = resume(&store, &options).await.unwrap().unwrap();
    assert_eq!(r.session.id, a.id);
    assert_eq!(r.forked_from, None);
    assert_eq!(r.hook_source(), "resume");
    assert_eq!(texts(&r.messages), ["one", "reply 0", "two", "reply 1"]);
    // The run writes on to the same log.
    store.append(&a.id, vec![user("three")]).await.unwrap();
    assert_eq!(store.metadata(&a.id).await.unwrap().message_count, 5);
}

#[tokio::test]
async fn continue_recent_picks_the_latest_session_of_the_working_directory() {
    let (_dir, store) = store().await;
    let old = session(&store, "/p", &["old"]).await;
    let newer = session(&store, "/p", &["newer"]).await;
    let elsewhere = session(&store, "/q", &["elsewhere"]).await;
    let options = |cwd: Option<&str>| ResumeOptions {
        continue_recent: true,
        cwd: cwd.map(str::to_owned),
        ..ResumeOptions::default()
    };
    let r = resume(&store, &options(Some("/p"))).await.unwrap().unwrap();
    assert_eq!(r.session.id, newer.id);
    assert_eq!(texts(&r.messages), ["newer", "reply 0"]);
    // Any directory: the latest of all.
    let r = resume(&store, &options(None)).await.unwrap().unwrap();
    assert_eq!(r.session.id, elsewhere.id);
    // Writing to the old one makes it the most recent.
    store.append(&old.id, vec![user("again")]).await.unwrap();
    store.close(&old.id).await.unwrap();
    let picked = most_recent(&store, Some("/p")).await.unwrap().unwrap();
    assert_eq!(picked.id, old.id);
    // A directory without sessions: nothing to continue, a new session starts.
    assert!(
        resume(&store, &options(Some("/none")))
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn fork_copies_the_history_into_a_new_session_and_leaves_the_original() {
    let (_dir, store) = store().await;
    let a = session(&store, "/p", &["one", "two"]).await;
    let options = ResumeOptions {
        session_id: Some(a.id.clone()),
        fork: true,
        fork_id: Some(SessionId::parse("child").unwrap()),
        ..ResumeOptions::default()
    };
    let r = resume(&store, &options).await.unwrap().unwrap();
    assert_eq!(r.session.id.as_str(), "child");
    assert_eq!(r.forked_from.as_ref(), Some(&a.id));
    assert_eq!(r.hook_source(), "fork");
    assert_eq!(r.session.parent_id.as_deref(), Some(a.id.as_str()));
    assert_eq!(texts(&r.messages), ["one", "reply 0", "two", "reply 1"]);
    store
        .append(&r.session.id, vec![user("only in the child")])
        .await
        .unwrap();
    let original = store.metadata(&a.id).await.unwrap();
    assert_eq!(original, a, "the original is untouched");
}

#[tokio::test]
async fn resume_at_keeps_the_history_up_to_the_event_and_always_forks() {
    let (_dir, store) = store().await;
    let a = session(&store, "/p", &["one", "two", "three"]).await;
    let messages = store.messages(&a.id, None).await.unwrap();
    // Resume right after "reply 0".
    let at = messages[1].event_id.clone();
    let options = ResumeOptions {
        session_id: Some(a.id.clone()),
        resume_at: Some(at.clone()),
        ..ResumeOptions::default()
    };
    let r = resume(&store, &options).await.unwrap().unwrap();
    assert_ne!(r.session.id, a.id, "resume_at without fork still forks");
    assert_eq!(r.forked_from.as_ref(), Some(&a.id));
    assert_eq!(r.session.fork_point.as_deref(), Some(at.as_str()));
    assert_eq!(texts(&r.messages), ["one", "reply 0"]);
    assert_eq!(store.metadata(&a.id).await.unwrap().message_count, 6);
}

#[tokio::test]
async fn combined_modes_apply_in_order_continue_then_fork_then_resume_at() {
    let (_dir, store) = store().await;
    let _other_dir = session(&store, "/q", &["q"]).await;
    let a = session(&store, "/p", &["one", "two"]).await;
    let _other_dir_later = session(&store, "/q", &["q later"]).await;
    let at = store.messages(&a.id, None).await.unwrap()[2]
        .event_id
        .clone();
    let options = ResumeOptions {
        continue_recent: true,
        cwd: Some("/p".into()),
        fork: true,
        resume_at: Some(at),
        fork_id: Some(SessionId::parse("picked-forked-cut").unwrap()),
        ..ResumeOptions::default()
    };
    let r = resume(&store, &options).await.unwrap().unwrap();
    assert_eq!(r.session.id.as_str(), "picked-forked-cut");
    assert_eq!(r.forked_from.as_ref(), Some(&a.id));
    assert_eq!(texts(&r.messages), ["one", "reply 0", "two"]);
    assert_eq!(r.session.cwd.as_deref(), Some("/p"));
}

#[tokio::test]
async fn recovery_errors_are_clear() {
    let (_dir, store) = store().await;
    let a = session(&store, "/p", &["one"]).await;
    let both = ResumeOptions {
        session_id: Some(a.id.clone()),
        continue_recent: true,
        ..ResumeOptions::default()
    };
    assert_eq!(
        pick_session(&store, &both).await.unwrap_err().to_string(),
        "give a session id or continue the most recent session, not both"
    );
    let fork_nothing = ResumeOptions {
        fork: true,
        ..ResumeOptions::default()
    };
    assert!(matches!(
        pick_session(&store, &fork_nothing).await,
        Err(StoreError::BadInput(_))
    ));
    let unknown = ResumeOptions {
        session_id: Some(SessionId::parse("nope").unwrap()),
        ..ResumeOptions::default()
    };
    let err = resume(&store, &unknown).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    let bad_event = ResumeOptions {
        session_id: Some(a.id.clone()),
        resume_at: Some(EventId("no-such-event".into())),
        ..ResumeOptions::default()
    };
    let err = resume(&store, &bad_event).await.unwrap_err();
    assert!(matches!(err, StoreError::BadForkPoint { .. }), "{err}");
    assert!(err.to_string().contains("no-such-event"), "{err}");
    // Nothing was created by the failed attempts.
    assert_eq!(store.list(ListQuery::default()).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_async_store_serves_every_backend_call() {
    let (_dir, store) = store().await;
    let backend: &dyn SessionBackend = &store;
    let a = backend
        .create(NewSession {
            id: Some(SessionId::parse("a").unwrap()),
            cwd: Some("/p".into()),
            title: Some("first".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let logged = backend
        .append(&a.id, vec![user("hi"), assistant("hello"), user("bye")])
        .await
        .unwrap();
    assert_eq!(logged.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 4, 5]);
    let tail = backend
        .load(
            &a.id,
            LoadRange {
                offset: 1,
                limit: Some(1),
            },
        )
        .await
        .unwrap();
    assert_eq!(tail.events, logged[1..2]);
    assert_eq!(
        texts(&backend.messages(&a.id, Some(1)).await.unwrap()),
        ["bye"]
    );
    let meta = backend.rename(&a.id, "second").await.unwrap();
    assert_eq!(meta.title.as_deref(), Some("second"));
    let meta = backend.tag(&a.id, "keep", false).await.unwrap();
    assert_eq!(meta.tags, ["keep"]);
    let child = backend
        .fork(
            &a.id,
            ForkOptions {
                at: ForkAt::UpToMessage(1),
                new_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(child.message_count, 1);
    let exported = backend.export(&a.id, ExportFormat::Jsonl).await.unwrap();
    let copy = backend
        .import(exported.clone(), Some(SessionId::parse("copy").unwrap()))
        .await
        .unwrap();
    // Under a new id, the log's own `sessionId` names the new session; the rest is verbatim.
    assert_eq!(
        backend.export(&copy.id, ExportFormat::Jsonl).await.unwrap(),
        exported.replacen(r#""sessionId":"a""#, r#""sessionId":"copy""#, 1)
    );
    let listed: Vec<String> = backend
        .list(ListQuery {
            tag: Some("keep".into()),
            ..ListQuery::default()
        })
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id.to_string())
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    backend.close(&a.id).await.unwrap();
    backend.delete(&a.id).await.unwrap();
    assert!(matches!(
        backend.metadata(&a.id).await,
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(store.reindex().await.unwrap(), 2);
}
