// A team's callback handler that trusts nothing payops wrote: each notification the gateway
// forwards is verified by the payment platform's own Node SDK, as a merchant's server would.
//
//   node verifyinghandler.mjs --port 0 --alipay-public-key PEM --alipay-app-id ID
//        --wechat-public-key PEM --wechat-serial SERIAL --apiv3-key-file FILE [--max-age 300]
//
// Prints "listening PORT" as its first line. POST: verify and answer as the platform expects
// (Alipay: 200 "success"; WeChat Pay: 200 {"code":"SUCCESS"}; refused: 401 with the reason).
// GET /verdicts: every POST's verdict so far, in order, as JSON.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { AlipaySdk } from 'alipay-sdk';
import wechatpay from 'wechatpay-axios-plugin';

const { Rsa, Aes } = wechatpay;
const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'alipay-public-key': { type: 'string' },
    'alipay-app-id': { type: 'string' },
    'wechat-public-key': { type: 'string' },
    'wechat-serial': { type: 'string' },
    'apiv3-key-file': { type: 'string' },
    'max-age': { type: 'string', default: '300' },
  },
});

// The SDK insists on the app's own private key, which only signs requests to Alipay: a
// throwaway one will do. Its key formatting expects no trailing newline in the PEM.
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const alipay = new AlipaySdk({
  appId: args['alipay-app-id'],
  privateKey: privateKey.trim(),
  keyType: 'PKCS8',
  alipayPublicKey: readFileSync(args['alipay-public-key'], 'utf8').trim(),
});
const wechatKey = Rsa.from(`file://${args['wechat-public-key']}`, Rsa.KEY_TYPE_PUBLIC);
const apiV3Key = readFileSync(args['apiv3-key-file'], 'utf8').replace(/[\r\n]+$/, '');
const maxAge = Number(args['max-age']);

// An Alipay form decoded in its own charset (a gbk form's escapes are gbk bytes, which
// URLSearchParams would read as UTF-8), values kept as sent: checkNotifySignV2 decodes nothing.
function alipayParams(raw) {
  const charset = /(?:^|&)charset=([^&]*)/.exec(raw)?.[1] || 'utf-8';
  const decoder = new TextDecoder(decodeURIComponent(charset));
  const decode = (text) => decoder.decode(Buffer.from(
    text.replace(/\+/g, ' ').replace(/%([0-9a-fA-F]{2})/g, (_, hex) =>
      String.fromCharCode(parseInt(hex, 16))), 'latin1'));
  const params = {};
  for (const pair of raw.split('&').filter(Boolean)) {
    const at = pair.indexOf('=');
    params[decode(at < 0 ? pair : pair.slice(0, at))] = at < 0 ? '' : decode(pair.slice(at + 1));
  }
  return params;
}

function verifyAlipay(raw) {
  const params = alipayParams(raw);
  const fields = ['trade_status', 'out_trade_no', 'trade_no', 'out_biz_no', 'refund_fee',
    'gmt_refund', 'refund_reason', 'charset'];
  const verdict = Object.fromEntries(fields.filter((f) => f in params).map((f) => [f, params[f]]));
  if (!alipay.checkNotifySignV2(params)) return { ...verdict, reason: 'alipay-sdk: bad signature' };
  // The SDK checks the signature only; whose notification it is stays the merchant's check.
  if (params.app_id !== args['alipay-app-id']) {
    return { ...verdict, reason: `app_id ${params.app_id} is not this app's` };
  }
  return { ...verdict, verified: true };
}

function verifyWechat(headers, body) {
  const timestamp = headers['wechatpay-timestamp'];
  const nonce = headers['wechatpay-nonce'];
  const verdict = { timestamp: Number(timestamp) };
  if (headers['wechatpay-serial'] !== args['wechat-serial']) {
    return { ...verdict, reason: `unknown Wechatpay-Serial ${headers['wechatpay-serial']}` };
  }
  // WeChat Pay's own rule against replays: a signature older than five minutes is refused.
  const age = Math.floor(Date.now() / 1000) - Number(timestamp);
  if (!(Math.abs(age) <= maxAge)) {
    return { ...verdict, reason: `Wechatpay-Timestamp is ${age} s old, more than ${maxAge} s` };
  }
  const message = `${timestamp}\n${nonce}\n${body}\n`;
  if (!Rsa.verify(message, headers['wechatpay-signature'] ?? '', wechatKey)) {
    return { ...verdict, reason: 'wechatpay-axios-plugin: bad signature' };
  }
  const notice = JSON.parse(body);
  verdict.eventType = notice.event_type;
  const { ciphertext, nonce: iv, associated_data: aad } = notice.resource;
  let resource;
  try {
    resource = JSON.parse(Aes.AesGcm.decrypt(ciphertext, apiV3Key, iv, aad));
  } catch (error) {
    return { ...verdict, reason: `resource does not decrypt: ${error.message}` };
  }
  return { ...verdict, verified: true, resource };
}

const verdicts = [];
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/verdicts') {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(verdicts));
    return;
  }
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const raw = Buffer.concat(chunks);
    const h = request.headers;
    const wechat = 'wechatpay-signature' in h;
    let verdict;
    try {
      verdict = wechat ? verifyWechat(h, raw.toString('utf8')) : verifyAlipay(raw.toString('latin1'));
    } catch (error) {
      verdict = { reason: `cannot read the notification: ${error.message}` };
    }
    verdicts.push({
      platform: wechat ? 'wechatpay' : 'alipay',
      verified: verdict.verified === true,
      reason: verdict.reason ?? '',
      event: h['x-payops-event'] ?? '',
      payNo: h['x-payops-pay-no'] ?? '',
      idempotencyKey: h['idempotency-key'] ?? '',
      delivery: h['x-payops-delivery'] ?? '',
      ...verdict,
    });
    if (!verdict.verified) {
      response.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end(verdict.reason);
    } else if (wechat) {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end('{"code":"SUCCESS"}');
    } else {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end('success');
    }
  });
});
server.listen(Number(args.port), '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
