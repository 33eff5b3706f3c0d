/**
 * The page's script, plain browser JavaScript (no framework, no build step). It keeps the admin token in
 * sessionStorage, loads registrations, events and failures from the API, then follows the stream with an
 * EventSource opened on a stream ticket. Every value from the server is written with textContent, never as
 * HTML. (A template string: no backticks or dollar-brace sequences inside.)
 */
export const script = `
(function () {
  'use strict';
  var TOKEN_KEY = 'adwire-receiver-token';
  var state = { token: null, source: null, lastId: null, registrations: {}, events: {}, failures: {}, reloading: null,
    relayTimer: null };
  var byId = function (id) { return document.getElementById(id); };

  function el(tag, props, children) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (key) {
      if (key === 'text') node.textContent = props[key];
      else if (key === 'className') node.className = props[key];
      else node.setAttribute(key, props[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }
  function when(iso) {
    var date = new Date(iso);
    return el('time', { datetime: iso, title: iso, text: date.toLocaleTimeString([], { hour12: false }) + '.' +
      String(date.getMilliseconds()).padStart(3, '0') });
  }
  function setStatus(text, kind) {
    var pill = byId('status');
    pill.textContent = text;
    pill.className = 'pill ' + (kind || '');
  }
  function api(path, method) {
    return fetch(path, { method: method || 'GET', headers: { authorization: 'Bearer ' + state.token } })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) {
            var message = body && body.error ? body.error.message + ' (' + body.error.code + ')' : 'HTTP ' + response.status;
            var error = new Error(message);
            error.status = response.status;
            throw error;
          }
          return body;
        });
      });
  }

  function registrationCard(registration) {
    var card = byId('registration-' + registration.id);
    if (card) return card;
    card = el('article', { className: 'registration', id: 'registration-' + registration.id,
      'data-registration': registration.id }, [
      el('div', { className: 'title' }, [
        el('h3', { text: registration.label || registration.id }),
        el('span', { className: 'badge', text: registration.auth + (registration.shape ? ' · ' + registration.shape : '') }),
        el('code', { text: registration.url })
      ]),
      el('h4', { text: 'Operations' }),
      el('div', { className: 'operations' }, [el('p', { className: 'empty', text: 'No event yet.' })]),
      el('h4', { text: 'Verification failures' }),
      el('ol', { className: 'failures' })
    ]);
    byId('timelines').appendChild(card);
    return card;
  }
  function renderRegistrations(list) {
    var body = byId('registration-rows');
    body.textContent = '';
    byId('no-registrations').hidden = list.length > 0;
    list.forEach(function (registration) {
      state.registrations[registration.id] = registration;
      body.appendChild(el('tr', {}, [
        el('td', { className: 'nowrap' }, [el('code', { text: registration.id })]),
        el('td', { text: registration.label || '' }),
        el('td', { text: registration.auth }),
        el('td', { text: registration.shape || 'detect' }),
        el('td', {}, [el('code', { text: registration.url })]),
        el('td', {}, [when(registration.created_at)])
      ]));
      registrationCard(registration);
    });
  }
  function statusClass(status) {
    if (status === 'completed') return 'terminal-ok';
    if (status === 'failed' || status === 'rejected' || status === 'canceled') return 'terminal-bad';
    if (status === 'input-required' || status === 'auth-required') return 'waiting';
    return '';
  }
  function addEvent(registrationId, event, fresh) {
    var key = registrationId + ' ' + event.idempotency_key;
    var existing = state.events[key];
    if (existing) { existing.querySelector('.publications').replaceWith(publications(event)); return; }
    var card = registrationCard(state.registrations[registrationId] || { id: registrationId, auth: '?', url: '' });
    var operations = card.querySelector('.operations');
    var empty = operations.querySelector('.empty');
    if (empty) empty.remove();
    var operation = event.operation_id || '(no operation_id)';
    var group = Array.prototype.find.call(operations.children, function (node) {
      return node.getAttribute('data-operation') === operation;
    });
    if (!group) {
      group = el('div', { className: 'operation', 'data-operation': operation }, [
        el('h4', {}, [document.createTextNode('operation '), el('code', { text: operation })]),
        el('ol', { className: 'timeline' })
      ]);
      operations.appendChild(group);
    }
    var item = el('li', { className: statusClass(event.status) + (fresh ? ' fresh' : ''),
      'data-key': event.idempotency_key, 'data-status': event.status || '' }, [
      when(event.received_at),
      el('span', { className: 'status', text: event.status || '(no status)' }),
      el('span', {}, [document.createTextNode('task '), el('code', { text: event.task_id || '-' })]),
      el('span', {}, [document.createTextNode('key '), el('code', { text: event.idempotency_key })]),
      publications(event)
    ]);
    state.events[key] = item;
    group.querySelector('ol').appendChild(item);
  }
  function publications(event) {
    return el('span', { className: 'publications' + (event.publications > 1 ? ' over' : ''),
      text: 'published ' + event.publications + '×' });
  }
  function addFailure(registrationId, failure, fresh) {
    if (state.failures[failure.id]) return;
    state.failures[failure.id] = true;
    var card = registrationCard(state.registrations[registrationId] || { id: registrationId, auth: '?', url: '' });
    card.querySelector('ol.failures').appendChild(el('li', { className: fresh ? 'fresh' : '', 'data-code': failure.code }, [
      when(failure.at),
      el('code', { className: 'code', text: failure.code }),
      el('span', { text: 'HTTP ' + failure.http_status }),
      el('span', { text: failure.message || '' })
    ]));
  }

  function reloadRegistrations() {
    state.reloading = state.reloading || api('/api/registrations').then(function (body) {
      renderRegistrations(body.registrations);
    }).finally(function () { state.reloading = null; });
    return state.reloading;
  }
  function known(registrationId) {
    return state.registrations[registrationId] ? Promise.resolve() : reloadRegistrations();
  }
  function openStream() {
    if (state.source) state.source.close();
    return api('/api/stream-tickets', 'POST').then(function (body) {
      return new Promise(function (resolve) {
        // A new EventSource does not send Last-Event-ID: resume after the last message seen, if any.
        var since = state.lastId ? '&since=' + encodeURIComponent(state.lastId) : '';
        var source = new EventSource('/api/stream?ticket=' + encodeURIComponent(body.ticket) + since);
        state.source = source;
        source.addEventListener('ready', function () { setStatus('live', 'live'); resolve(); });
        source.addEventListener('delivery', function (message) {
          state.lastId = message.lastEventId || state.lastId;
          var event = JSON.parse(message.data);
          known(event.registration_id).then(function () { addEvent(event.registration_id, event, true); });
        });
        source.addEventListener('failure', function (message) {
          state.lastId = message.lastEventId || state.lastId;
          var failure = JSON.parse(message.data);
          known(failure.registration_id).then(function () { addFailure(failure.registration_id, failure, true); });
        });
        source.onerror = function () {
          setStatus('reconnecting', 'reconnecting');
          if (source.readyState === EventSource.CLOSED && state.source === source) {
            setTimeout(function () { openStream().catch(function () {}); }, 2000);
          }
          resolve();
        };
      });
    });
  }
  function loadHistory() {
    var ids = Object.keys(state.registrations);
    return Promise.all(ids.map(function (id) {
      return Promise.all([
        api('/api/events?registration=' + encodeURIComponent(id)),
        api('/api/failures?registration=' + encodeURIComponent(id))
      ]).then(function (lists) {
        lists[0].events.forEach(function (event) { addEvent(id, event, false); });
        lists[1].failures.forEach(function (failure) { addFailure(id, failure, false); });
      });
    }));
  }
  // The relay's lag and last error, every five seconds while connected: /health says whether there is a
  // sink, the admin API gives its state with the error's text.
  function showRelay() {
    return fetch('/health').then(function (response) { return response.json(); }).then(function (health) {
      return health.forwarding ? api('/api/relay') : null;
    }).then(function (relay) {
      byId('relay').hidden = !relay;
      if (!relay) return;
      byId('relay-sink').textContent = 'into ' + (relay.sink || 'the sink');
      byId('relay-pending').textContent = String(relay.pending);
      byId('relay-oldest').textContent = relay.oldest_pending_s === null || relay.oldest_pending_s === undefined
        ? '' : '(oldest ' + relay.oldest_pending_s + ' s)';
      byId('relay-published').textContent = String(relay.published || 0);
      byId('relay-error').textContent = relay.last_error
        ? 'last error at ' + relay.last_error_at + ': ' + relay.last_error : '';
    }).catch(function () {});
  }
  function followRelay() {
    if (state.relayTimer) return;
    showRelay();
    state.relayTimer = setInterval(showRelay, 5000);
  }
  function connect(token) {
    state.token = token;
    byId('auth-error').textContent = '';
    return reloadRegistrations().then(function () {
      sessionStorage.setItem(TOKEN_KEY, token);
      byId('content').hidden = false;
      byId('forget').hidden = false;
      followRelay();
      return openStream();
    }).then(loadHistory).catch(function (error) {
      byId('auth-error').textContent = error.status === 401 || error.status === 403
        ? 'That admin token was refused: ' + error.message : 'Could not load: ' + error.message;
      setStatus('disconnected', '');
    });
  }

  byId('auth').addEventListener('submit', function (submit) {
    submit.preventDefault();
    var token = byId('token').value.trim();
    if (token) connect(token);
  });
  byId('forget').addEventListener('click', function () {
    sessionStorage.removeItem(TOKEN_KEY);
    location.reload();
  });
  var saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) { byId('token').value = saved; connect(saved); }
})();
`
