// The `rekognition` provider against a mocked DetectModerationLabels: what it sends (a bounded JPEG of the
// first frame, never the original, and the confidence floor) and how the service's answer becomes a
// Classification (confidence / 100; the score the highest top-level label's).
import {
  DetectModerationLabelsCommand,
  InvalidImageFormatException,
  RekognitionClient,
} from '@aws-sdk/client-rekognition';
import { mockClient } from 'aws-sdk-client-mock';
import sharp from 'sharp';
import { beforeEach, describe, expect, it } from 'vitest';
import { classifierFor } from '#lib/moderation/classifier.ts';
import { animatedGif, photoJpeg } from '#test/support/images.ts';

const rekognition = mockClient(RekognitionClient);
const OPTIONS = { maxInputPixels: 50_000_000, region: 'eu-west-1' };

/** The bytes of each DetectModerationLabels call, with its MinConfidence. */
function sent() {
  return rekognition.commandCalls(DetectModerationLabelsCommand).map((call) => ({
    bytes: Buffer.from(call.args[0].input.Image?.Bytes ?? new Uint8Array()),
    minConfidence: call.args[0].input.MinConfidence,
  }));
}

describe('the Rekognition classifier', () => {
  beforeEach(() => {
    rekognition.reset();
  });

  it('sends a JPEG at most 1024 pixels a side of a 24-megapixel photo, and maps the labels', async () => {
    rekognition.on(DetectModerationLabelsCommand).resolves({
      ModerationModelVersion: '7.0',
      ModerationLabels: [
        { Name: 'Swimwear or Underwear', ParentName: '', TaxonomyLevel: 1, Confidence: 62.5 },
        {
          Name: 'Female Swimwear or Underwear',
          ParentName: 'Swimwear or Underwear',
          TaxonomyLevel: 2,
          Confidence: 97,
        },
        { Name: 'Violence', ParentName: '', TaxonomyLevel: 1, Confidence: 12 },
      ],
    });
    const photo = await photoJpeg(6000, 4000);
    const classifier = await classifierFor('rekognition', OPTIONS);
    const answer = await classifier.classify(photo);

    expect(answer).toEqual({
      labels: [
        { name: 'Swimwear or Underwear', score: 0.625 },
        { name: 'Female Swimwear or Underwear', score: 0.97 },
        { name: 'Violence', score: 0.12 },
      ],
      // The highest top-level label's: a child label's confidence is not the score.
      score: 0.625,
      model: 'rekognition 7.0',
    });
    const [call, ...more] = sent();
    expect(more).toEqual([]);
    // Labels a low threshold needs are asked for (the service's default would hide those under 50 %).
    expect(call?.minConfidence).toBe(1);
    const image = await sharp(call?.bytes).metadata();
    expect({ format: image.format, width: image.width, height: image.height }).toEqual({
      format: 'jpeg',
      width: 1024,
      height: 683,
    });
    expect(call?.bytes.length).toBeLessThan(photo.length / 4);
    expect(call?.bytes.length).toBeLessThan(5 * 1024 * 1024);
  }, 30_000);

  it('never enlarges a small image, and sends the first frame of an animation', async () => {
    rekognition.on(DetectModerationLabelsCommand).resolves({ ModerationLabels: [] });
    const classifier = await classifierFor('rekognition', OPTIONS);
    const gif = await animatedGif(300, 200, 4);
    const answer = await classifier.classify(gif);

    expect(answer).toEqual({ labels: [], score: 0, model: 'rekognition unknown' });
    const { bytes } = sent()[0]!;
    const image = await sharp(bytes).metadata();
    expect({ format: image.format, width: image.width, height: image.height }).toEqual({
      format: 'jpeg',
      width: 300,
      height: 200,
    });
    // The first frame is red, its top-left quarter transparent (white once flattened); the third is blue.
    const { data } = await sharp(bytes).extract({ left: 200, top: 150, width: 1, height: 1 }).raw().toBuffer({
      resolveWithObject: true,
    });
    expect(data[0]).toBeGreaterThan(200);
    expect(data[2]).toBeLessThan(60);
    const corner = await sharp(bytes).extract({ left: 10, top: 10, width: 1, height: 1 }).raw().toBuffer();
    expect([...corner].every((value) => value > 230)).toBe(true);
  });

  it("passes the service's refusal on, so the caller retries", async () => {
    rekognition
      .on(DetectModerationLabelsCommand)
      .rejects(
        new InvalidImageFormatException({ message: 'Request has invalid image format', $metadata: {} }),
      );
    const classifier = await classifierFor('rekognition', OPTIONS);
    await expect(classifier.classify(await photoJpeg(64, 48))).rejects.toThrow(/invalid image format/);
  });
});
