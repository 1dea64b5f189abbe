// The client's requests: headers with the token as a bearer, and a refusal read into the one
// HTTP error whether or not its body is the relay's JSON.
import { describe, expect, it } from 'vitest';
import { relayHeaders, relayHttpError } from '../../src/relay/relayHttp.js';

describe('relayHttp', () => {
  it('sends the token as a bearer only when there is one', () => {
    expect(relayHeaders('application/json', 't')).toEqual({ accept: 'application/json', authorization: 'Bearer t' });
    expect(relayHeaders('text/event-stream', undefined)).toEqual({ accept: 'text/event-stream' });
  });

  it("reads the relay's code from its JSON, and the status alone from any other body", () => {
    expect(relayHttpError(401, '{"code":"relay_unauthorized","message":"a valid relay token is required"}')).toMatchObject({ code: 'relay_unauthorized', status: 401 });
    expect(relayHttpError(404, '<html>')).toMatchObject({ status: 404 });
  });
});
